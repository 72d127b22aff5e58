/** JSON timestamps are always `Date.toISOString()` output; null stays null. */
export function iso(value: Date | null | undefined): string | null {
  return value ? value.toISOString() : null;
}

/**
 * SQL: a timestamptz written as `iso()` writes it (UTC, milliseconds cut, `Z`), for reads that hand their
 * timestamps straight to JSON: PostgreSQL formats one in well under a microsecond, where Node spends about
 * 2.5 µs parsing the text into a Date and formatting it again.
 */
export const isoSql = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
