import { AppError } from '../errors/app-error';
import { isUuid } from '../utils/uuid';

/**
 * Keyset pagination over (timestamp, id), for every list. The usual cursor names a place in the list, not a
 * row, so deleting the last row of a page breaks nothing. A place is the timestamp in microseconds since the
 * epoch (exact: JavaScript dates hold milliseconds, PostgreSQL microseconds) and the id; the cursor is
 * `<microseconds>.<id>` in base64url. A list whose API names its cursor the id of the previous page's last
 * row (the inbox) keeps that: its place is then read from the row, in the same statement.
 */
export interface KeysetPlace {
  /** Microseconds since the epoch, as decimal text. */
  micros: string;
  id: string;
}

/** What a list answers as `nextCursor`: the place (`place`), or the last row's id (`row-id`). */
type KeysetCursor = 'place' | 'row-id';

/**
 * Where the page starts: after the place a cursor holds, its `micros` and `id` in the parameters of those
 * numbers; or after the row a `row-id` cursor names, `row` being SQL that answers that row's (timestamp, id)
 * and nothing when the cursor names no row the caller may page from.
 */
export type KeysetStart = { micros: number; id: number } | { row: string };

/** Microseconds since the epoch: 18 digits stay within bigint and PostgreSQL's timestamp range. */
const MICROS = /^\d{1,18}$/;

/** SQL of a row's place in the list: select it as `position` beside the row (`column`: its timestamp). */
export const keysetPositionSql = (column: string): string =>
  `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

/**
 * SQL keeping the rows after `start`: newer ones for a list oldest first (`asc`), older ones for newest first
 * (`desc`). `column` and `idColumn` must be the list's order.
 */
export function keysetAfterSql(
  column: string,
  idColumn: string,
  order: 'asc' | 'desc',
  start: KeysetStart,
): string {
  const operator = order === 'asc' ? '>' : '<';
  const place =
    'row' in start
      ? start.row
      : `('epoch'::timestamptz + $${start.micros}::bigint * interval '1 microsecond', $${start.id}::uuid)`;
  return `(${column}, ${idColumn}) ${operator} ${place}`;
}

export function encodeKeysetCursor(place: KeysetPlace): string {
  return Buffer.from(`${place.micros}.${place.id}`).toString('base64url');
}

/**
 * The place a cursor names; 400 VALIDATION_ERROR when it is malformed. `legacy` reads a format a list
 * answered before this one, so cursors clients still hold keep working.
 */
export function decodeKeysetCursor(
  cursor: string,
  legacy?: (text: string) => KeysetPlace | null,
): KeysetPlace {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const [micros, id, ...rest] = text.split('.');
  if (rest.length === 0 && MICROS.test(micros) && isUuid(id)) return { micros, id };
  const old = legacy?.(text);
  if (old) return old;
  throw AppError.validation('cursor is malformed');
}

/** A row that knows its place (`position`: `keysetPositionSql`). */
export interface PlacedRow {
  id: string;
  position: string;
}

export interface KeysetPage<Row> {
  page: Row[];
  nextCursor: string | null;
}

/**
 * One page from `limit` + 1 rows read after the cursor's place: the page, and the cursor of the next one (null
 * on the last page); the extra row only tells that there is a next page.
 */
export function keysetPage<Row extends PlacedRow>(found: Row[], limit: number): KeysetPage<Row>;
/** The same for a list whose cursor is the id of the previous page's last row: its rows need no place. */
export function keysetPage<Row extends { id: string }>(
  found: Row[],
  limit: number,
  cursor: 'row-id',
): KeysetPage<Row>;
export function keysetPage<Row extends { id: string; position?: string }>(
  found: Row[],
  limit: number,
  cursor: KeysetCursor = 'place',
): KeysetPage<Row> {
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  if (found.length <= limit) return { page, nextCursor: null };
  return {
    page,
    nextCursor:
      cursor === 'row-id' ? last.id : encodeKeysetCursor({ micros: String(last.position), id: last.id }),
  };
}

/**
 * One page of a list after `cursor` (none: the first page): `read` gets the cursor's place (null for the
 * first page) and how many rows to read (`limit` + 1); answers the page and the next cursor. `legacy` as
 * for `decodeKeysetCursor`.
 */
export async function readKeysetPage<Row extends PlacedRow>(
  cursor: string | undefined,
  limit: number,
  read: (after: KeysetPlace | null, rows: number) => Promise<Row[]>,
  legacy?: (text: string) => KeysetPlace | null,
): Promise<KeysetPage<Row>> {
  const after = cursor === undefined ? null : decodeKeysetCursor(cursor, legacy);
  return keysetPage(await read(after, limit + 1), limit);
}
