/** What the clocks of a time zone show at some instant; month 1–12, hour 0–23. */
export interface ZonedClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** One formatter per zone, reused: building an Intl.DateTimeFormat costs far more than asking one. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** What the clocks of `timeZone` (an IANA id) show at `instant` (a Date or epoch milliseconds), to the second. */
export function zonedClockAt(instant: Date | number, timeZone: string): ZonedClock {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const { year, month, day, hour, minute, second } = parts;
  return { year, month, day, hour, minute, second };
}

/**
 * Minutes `timeZone` is ahead of UTC at `instant`, rounded: ISO offsets have no seconds, and historic local
 * mean time (Shanghai's +08:05:43 until 1901) is not a whole number of minutes.
 */
export function offsetMinutesAt(instant: Date | number, timeZone: string): number {
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  const clock = zonedClockAt(ms, timeZone);
  const wallClock = Date.UTC(clock.year, clock.month - 1, clock.day, clock.hour, clock.minute, clock.second);
  return Math.round((wallClock - Math.floor(ms / 1000) * 1000) / 60_000);
}
