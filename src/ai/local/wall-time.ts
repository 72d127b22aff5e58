import { offsetMinutesAt, zonedClockAt } from '../../common/utils/zoned-time';

/** A date and time as the clocks of some time zone show it; month 1–12. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

export type WallDate = Pick<WallTime, 'year' | 'month' | 'day'>;

/** What the clocks in `timezone` show at `instant` (to the minute). */
export function wallTimeAt(instant: Date, timezone: string): WallTime {
  const { year, month, day, hour, minute } = zonedClockAt(instant, timezone);
  return { year, month, day, hour, minute };
}

const wallAsUtc = (wall: WallTime): number =>
  Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);

/**
 * The instant at which the clocks of `timezone` show `wall`. The offset is looked up twice so a time on the
 * other side of a DST change than its first guess still lands right; a time inside a spring-forward gap
 * (02:30 when clocks jump from 02:00 to 03:00) moves forward by the gap (03:30).
 */
export function instantOf(wall: WallTime, timezone: string): Date {
  const naive = wallAsUtc(wall);
  const firstOffset = offsetMinutesAt(new Date(naive), timezone);
  const secondOffset = offsetMinutesAt(new Date(naive - firstOffset * 60_000), timezone);
  for (const offset of [secondOffset, firstOffset]) {
    const instant = new Date(naive - offset * 60_000);
    if (wallAsUtc(wallTimeAt(instant, timezone)) === naive) return instant;
  }
  // No instant shows `wall`: it lies in a gap; read with the offset before the change, it is after the gap.
  return new Date(naive - Math.min(firstOffset, secondOffset) * 60_000);
}

function fromUtcDate(date: Date): WallDate {
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

export function addDays(date: WallDate, days: number): WallDate {
  return fromUtcDate(new Date(Date.UTC(date.year, date.month - 1, date.day + days)));
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(date: WallDate): number {
  return new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
}

/** The last day of the month `monthsAhead` months after the one of `date`. */
export function endOfMonth(date: WallDate, monthsAhead = 0): WallDate {
  return fromUtcDate(new Date(Date.UTC(date.year, date.month + monthsAhead, 0)));
}

export const sameDate = (a: WallDate, b: WallDate): boolean =>
  a.year === b.year && a.month === b.month && a.day === b.day;
