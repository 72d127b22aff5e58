import { isIanaTimezone, isIsoTimestamp } from './validators';

describe('validators', () => {
  it.each([
    ['2026-03-01T09:30:00.000Z', true],
    ['2026-03-01T09:30:00+08:00', true],
    ['2026-03-01T09:30Z', true],
    ['2026-03-01T09:30:00', false],
    ['2026-03-01', false],
    ['2026-13-01T09:30:00Z', false],
    ['tomorrow', false],
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
