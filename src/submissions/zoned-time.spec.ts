import { zonedIsoFormatter } from './zoned-time';

describe('zonedIsoFormatter', () => {
  const at = (value: string) => new Date(value);

  it.each([
    ['UTC', '2026-03-01T01:30:00.000Z', '2026-03-01T01:30:00.000+00:00'],
    ['Asia/Shanghai', '2026-03-01T01:30:00.000Z', '2026-03-01T09:30:00.000+08:00'],
    ['Asia/Shanghai', '2026-12-31T16:00:00.005Z', '2027-01-01T00:00:00.005+08:00'],
    ['America/New_York', '2026-01-15T12:00:00.123Z', '2026-01-15T07:00:00.123-05:00'],
    ['America/New_York', '2026-07-15T12:00:00.999Z', '2026-07-15T08:00:00.999-04:00'],
    ['America/New_York', '2026-03-01T03:00:00.000Z', '2026-02-28T22:00:00.000-05:00'],
    ['Asia/Kolkata', '2026-03-01T00:00:00.000Z', '2026-03-01T05:30:00.000+05:30'],
    ['Asia/Kathmandu', '2026-03-01T00:00:00.000Z', '2026-03-01T05:45:00.000+05:45'],
    ['America/St_Johns', '2026-01-01T00:00:00.000Z', '2025-12-31T20:30:00.000-03:30'],
    ['Pacific/Chatham', '2026-01-01T00:00:00.000Z', '2026-01-01T13:45:00.000+13:45'],
    ['Europe/Berlin', '2026-03-29T00:59:59.999Z', '2026-03-29T01:59:59.999+01:00'],
    ['Europe/Berlin', '2026-03-29T01:00:00.000Z', '2026-03-29T03:00:00.000+02:00'],
  ])('%s: %s → %s', (zone, instant, expected) => {
    expect(zonedIsoFormatter(zone)(at(instant))).toBe(expected);
  });

  it('writes midnight as 00, not 24', () => {
    expect(zonedIsoFormatter('UTC')(at('2026-05-05T00:00:00.000Z'))).toBe('2026-05-05T00:00:00.000+00:00');
  });

  it('names the same instant in every zone', () => {
    const instant = at('2026-10-25T00:30:00.250Z');
    for (const zone of ['Asia/Tokyo', 'Europe/London', 'America/Los_Angeles', 'Australia/Adelaide']) {
      expect(new Date(zonedIsoFormatter(zone)(instant)).getTime()).toBe(instant.getTime());
    }
  });
});
