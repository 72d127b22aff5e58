import { timezoneAsSent, isIanaTimezone, isIsoTimestamp, isPassword, trimmed } from './validators';

describe('validators', () => {
  it.each([
    ['2026-03-01T09:30:00.000Z', true],
    ['2026-03-01T09:30:00+08:00', true],
    ['2026-03-01T09:30Z', true],
    ['2026-03-01T09:30:00', false],
    ['2026-03-01', false],
    ['2026-13-01T09:30:00Z', false],
    ['2030-02-30T00:00:00Z', false],
    ['2030-04-31T12:00:00+08:00', false],
    ['2028-02-29T00:00:00Z', true],
    ['2030-02-29T00:00:00Z', false],
    ['2030-12-31T23:59:59.999Z', true],
    ['tomorrow', false],
    ['0001-01-01T00:00:00Z', true],
    ['0000-12-31T23:59:59Z', false],
    ['0001-01-01T00:30:00+01:00', false],
    ['9999-12-31T23:59:59.999Z', true],
    ['9999-12-31T20:00:00-05:00', false],
  ])('isIsoTimestamp(%s) = %s', (value, expected) => {
    expect(isIsoTimestamp(value)).toBe(expected);
  });

  it.each([
    ['UTC', true],
    ['Asia/Shanghai', true],
    ['America/New_York', true],
    ['Mars/Olympus', false],
    ['', false],
  ])('isIanaTimezone(%s) = %s', (value, expected) => {
    expect(isIanaTimezone(value)).toBe(expected);
  });
});

describe('password and time zone helpers', () => {
  it.each([
    ['12345678', true],
    ['1234567', false],
    ['密码密码密码密码', true],
    ['密码密码密码', false],
    ['a'.repeat(72), true],
    ['a'.repeat(73), false],
    ['é'.repeat(36), true],
    ['é'.repeat(37), false],
    [12345678, false],
  ])('isPassword(%s) = %s', (value, expected) => {
    expect(isPassword(value)).toBe(expected);
  });

  it('keeps a valid zone name as sent, mends only its letter case, and leaves anything else alone', () => {
    expect(timezoneAsSent('asia/shanghai')).toBe('Asia/Shanghai');
    expect(timezoneAsSent('UTC')).toBe('UTC');
    // The runtime's ICU data resolves these to their old aliases (Asia/Calcutta, Europe/Kiev, UTC).
    expect(timezoneAsSent('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(timezoneAsSent('Europe/Kyiv')).toBe('Europe/Kyiv');
    expect(timezoneAsSent('Etc/UTC')).toBe('Etc/UTC');
    expect(timezoneAsSent('Asia/Calcutta')).toBe('Asia/Calcutta');
    expect(timezoneAsSent('Mars/Olympus')).toBe('Mars/Olympus');
    expect(timezoneAsSent(5)).toBe(5);
  });

  it('trims strings and leaves other values to validation', () => {
    expect(trimmed('  Ada \n')).toBe('Ada');
    expect(trimmed(null)).toBeNull();
    expect(trimmed(5)).toBe(5);
  });
});
