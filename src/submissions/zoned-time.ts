const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/**
 * ISO 8601 with the offset of `timeZone` at that instant, e.g. `2026-03-01T09:30:00.000+08:00`
 * (CONTRACT: export times in the exporting user's time zone). One Intl formatter per call site, reused per row.
 */
export function zonedIsoFormatter(timeZone: string): (instant: Date) => string {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  return (instant) => {
    const parts: Record<string, number> = {};
    for (const part of format.formatToParts(instant)) {
      if (part.type !== 'literal') parts[part.type] = Number(part.value);
    }
    const millis = instant.getUTCMilliseconds();
    const wallClock = Date.UTC(
      parts.year,
      parts.month - 1,
      parts.day,
      parts.hour,
      parts.minute,
      parts.second,
      millis,
    );
    const offsetMinutes = Math.round((wallClock - instant.getTime()) / 60_000);
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    return (
      `${pad(parts.year, 4)}-${pad(parts.month)}-${pad(parts.day)}T${pad(parts.hour)}:${pad(parts.minute)}:` +
      `${pad(parts.second)}.${pad(millis, 3)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
    );
  };
}
