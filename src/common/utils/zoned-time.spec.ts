import { offsetMinutesAt, zonedClockAt, zonedIsoFormatter } from './zoned-time';

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

  it('is exact around an offset change, with one formatter reused across it', () => {
    const berlin = zonedIsoFormatter('Europe/Berlin');
    // Autumn: 03:00 CEST becomes 02:00 CET at 01:00 UTC; the same wall time occurs twice.
    expect(berlin(at('2026-10-25T00:59:59.999Z'))).toBe('2026-10-25T02:59:59.999+02:00');
    expect(berlin(at('2026-10-25T01:00:00.000Z'))).toBe('2026-10-25T02:00:00.000+01:00');
    expect(berlin(at('2026-10-25T00:30:00.000Z'))).toBe('2026-10-25T02:30:00.000+02:00');
    expect(berlin(at('2026-10-25T01:30:00.000Z'))).toBe('2026-10-25T02:30:00.000+01:00');
    const lordHowe = zonedIsoFormatter('Australia/Lord_Howe');
    // A half-hour daylight shift: 02:00 (+10:30) becomes 02:30 (+11:00).
    expect(lordHowe(at('2026-10-03T15:29:59.000Z'))).toBe('2026-10-04T01:59:59.000+10:30');
    expect(lordHowe(at('2026-10-03T15:30:00.000Z'))).toBe('2026-10-04T02:30:00.000+11:00');
  });

  it('keeps the instant for historic offsets that are not whole minutes', () => {
    const shanghai = zonedIsoFormatter('Asia/Shanghai');
    for (const value of ['1900-06-01T12:00:00.000Z', '1901-01-01T00:00:00.000Z']) {
      const written = shanghai(at(value));
      expect(written).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
      expect(new Date(written).toISOString()).toBe(value);
    }
  });

  it('does not depend on what the same formatter wrote before', () => {
    const shared = zonedIsoFormatter('America/New_York');
    const instants = [
      '2026-03-08T06:59:59.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-07-01T00:00:00.000Z',
      '2026-03-08T06:59:59.000Z',
    ];
    expect(instants.map((value) => shared(at(value)))).toEqual(
      instants.map((value) => zonedIsoFormatter('America/New_York')(at(value))),
    );
    expect(shared(at('2026-03-08T06:59:59.000Z'))).toBe('2026-03-08T01:59:59.000-05:00');
    expect(shared(at('2026-03-08T07:00:00.000Z'))).toBe('2026-03-08T03:00:00.000-04:00');
  });
});
