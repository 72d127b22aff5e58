import { AppError } from '../errors/app-error';
import { isUuid } from '../utils/uuid';

/**
 * Keyset pagination over (timestamp, id), the one cursor format of the lists: the cursor names a place in the
 * list, not a row, so deleting the last row of a page breaks nothing. A place is the timestamp in microseconds
 * since the epoch (exact: JavaScript dates hold milliseconds, PostgreSQL microseconds) and the id; the cursor
 * is `<microseconds>.<id>` in base64url.
 */
export interface KeysetPlace {
  /** Microseconds since the epoch, as decimal text. */
  micros: string;
  id: string;
}

/** Microseconds since the epoch: 18 digits stay within bigint and PostgreSQL's timestamp range. */
const MICROS = /^\d{1,18}$/;

/** SQL of a row's place in the list: select it as `position` beside the row (`column`: its timestamp). */
export const keysetPositionSql = (column: string): string =>
  `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

/**
 * SQL keeping the rows after the place in `$micros`, `$id` (parameter numbers): newer ones for a list oldest
 * first (`asc`), older ones for newest first (`desc`). `column` and `idColumn` must be the list's order.
 */
export function keysetAfterSql(
  column: string,
  idColumn: string,
  order: 'asc' | 'desc',
  micros: number,
  id: number,
): string {
  const operator = order === 'asc' ? '>' : '<';
  return `(${column}, ${idColumn}) ${operator} ('epoch'::timestamptz + $${micros}::bigint * interval '1 microsecond', $${id}::uuid)`;
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

/**
 * One page from `limit` + 1 rows read after the cursor's place: the page, and the cursor of the next one (null
 * on the last page); the extra row only tells that there is a next page.
 */
export function keysetPage<Row extends PlacedRow>(
  found: Row[],
  limit: number,
): { page: Row[]; nextCursor: string | null } {
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  return {
    page,
    nextCursor: found.length > limit ? encodeKeysetCursor({ micros: last.position, id: last.id }) : null,
  };
}
