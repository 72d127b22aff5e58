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

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** Offsets are looked up once per quarter hour of UTC: every zone changes its offset on such a boundary. */
const SLOT_MS = 15 * 60_000;
/** Bounds the lookups kept per formatter, so a long export does not grow memory. */
const SLOT_CACHE_LIMIT = 4096;

/**
 * ISO 8601 with the offset of `timeZone` at that instant, e.g. `2026-03-01T09:30:00.000+08:00`
 * (the export gives times in the exporting user's time zone). Make one per export and reuse it for every row:
 * Intl is asked once per quarter hour of UTC the rows fall in, not once per row.
 */
export function zonedIsoFormatter(timeZone: string): (instant: Date) => string {
  const offsetAt = (ms: number): number => offsetMinutesAt(ms, timeZone);

  const slotOffsets = new Map<number, number>();
  const offsetOf = (ms: number): number => {
    const slot = Math.floor(ms / SLOT_MS);
    const cached = slotOffsets.get(slot);
    if (cached !== undefined) return cached;
    const first = offsetAt(slot * SLOT_MS);
    // Historic offsets (local mean time) changed off the quarter hour: such a slot is not cached.
    if (first !== offsetAt(slot * SLOT_MS + SLOT_MS - 1)) return offsetAt(ms);
    if (slotOffsets.size >= SLOT_CACHE_LIMIT) slotOffsets.clear();
    slotOffsets.set(slot, first);
    return first;
  };

  return (instant) => {
    const offset = offsetOf(instant.getTime());
    const local = new Date(instant.getTime() + offset * 60_000);
    const abs = Math.abs(offset);
    return (
      `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
      `T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
      `.${pad(local.getUTCMilliseconds(), 3)}${offset < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
    );
  };
}
