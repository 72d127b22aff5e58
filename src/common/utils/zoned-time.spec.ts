import { offsetMinutesAt, zonedClockAt } from './zoned-time';

describe('zoned time', () => {
  it('reads the clocks of a zone, midnight as hour 0', () => {
    expect(zonedClockAt(new Date('2026-03-01T16:00:00.250Z'), 'Asia/Shanghai')).toEqual({
      year: 2026,
      month: 3,
      day: 2,
      hour: 0,
      minute: 0,
      second: 0,
    });
    expect(zonedClockAt(Date.parse('2026-07-15T12:34:56Z'), 'America/New_York')).toEqual({
      year: 2026,
      month: 7,
      day: 15,
      hour: 8,
      minute: 34,
      second: 56,
    });
  });

  it.each([
    ['UTC', '2026-03-01T00:00:00Z', 0],
    ['Asia/Kolkata', '2026-03-01T00:00:00Z', 330],
    ['America/St_Johns', '2026-01-01T00:00:00Z', -210],
    ['America/New_York', '2026-01-15T12:00:00Z', -300],
    ['America/New_York', '2026-07-15T12:00:00Z', -240],
    // Local mean time +08:05:43 rounds to the nearest minute.
    ['Asia/Shanghai', '1900-06-01T12:00:00Z', 486],
  ])('offset of %s at %s is %d minutes', (zone, instant, minutes) => {
    expect(offsetMinutesAt(new Date(instant), zone)).toBe(minutes);
    expect(offsetMinutesAt(Date.parse(instant), zone)).toBe(minutes);
  });

  it('changes exactly at a daylight-saving switch', () => {
    expect(offsetMinutesAt(Date.parse('2026-03-29T00:59:59.999Z'), 'Europe/Berlin')).toBe(60);
    expect(offsetMinutesAt(Date.parse('2026-03-29T01:00:00.000Z'), 'Europe/Berlin')).toBe(120);
  });
});
