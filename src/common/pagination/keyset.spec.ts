import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../errors/app-error';
import {
  decodeKeysetCursor,
  encodeKeysetCursor,
  KeysetPlace,
  keysetAfterSql,
  keysetPage,
  readKeysetPage,
} from './keyset';

describe('keyset pagination', () => {
  const rows = (count: number) =>
    Array.from({ length: count }, (_, n) => ({
      id: randomUUID(),
      position: String(1_700_000_000_000_000 + n),
    }));

  describe('keysetAfterSql', () => {
    it('compares with the place a cursor holds, passed as parameters', () => {
      expect(keysetAfterSql('k.created_at', 'k.id', 'asc', { micros: 3, id: 4 })).toBe(
        `(k.created_at, k.id) > ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::uuid)`,
      );
    });

    it('compares with the place of the row a row-id cursor names', () => {
      expect(
        keysetAfterSql('n.created_at', 'n.id', 'desc', { row: '(SELECT created_at, id FROM anchor)' }),
      ).toBe('(n.created_at, n.id) < (SELECT created_at, id FROM anchor)');
    });
  });

  describe('keysetPage', () => {
    it('answers the place of the last row as the next cursor, and null on the last page', () => {
      const found = rows(3);
      const { page, nextCursor } = keysetPage(found, 2);
      expect(page).toEqual(found.slice(0, 2));
      expect(decodeKeysetCursor(nextCursor!)).toEqual({ micros: found[1].position, id: found[1].id });
      expect(keysetPage(found, 3).nextCursor).toBeNull();
    });

    it("answers the last row's id for a row-id list, and null on the last page", () => {
      const found = rows(3).map(({ id }) => ({ id }));
      expect(keysetPage(found, 2, 'row-id')).toEqual({ page: found.slice(0, 2), nextCursor: found[1].id });
      expect(keysetPage(found, 3, 'row-id')).toEqual({ page: found, nextCursor: null });
    });
  });

  describe('decodeKeysetCursor', () => {
    it('reads what encodeKeysetCursor wrote', () => {
      const place = { micros: '1700000000000123', id: randomUUID() };
      expect(decodeKeysetCursor(encodeKeysetCursor(place))).toEqual(place);
    });

    it('refuses a malformed cursor (400 VALIDATION_ERROR), a bare row id included', () => {
      for (const cursor of ['bm90IGEgY3Vyc29y', randomUUID()]) {
        expect(() => decodeKeysetCursor(cursor)).toThrow(
          expect.objectContaining({ code: ErrorCode.VALIDATION_ERROR }),
        );
      }
    });
  });

  describe('readKeysetPage', () => {
    it('reads limit + 1 rows after the place the cursor names (none for the first page)', async () => {
      const found = rows(3);
      const asked: [KeysetPlace | null, number][] = [];
      const read = (after: KeysetPlace | null, count: number) => {
        asked.push([after, count]);
        return Promise.resolve(found);
      };
      const place = { micros: '1700000000000123', id: randomUUID() };
      expect(await readKeysetPage(undefined, 2, read)).toEqual(keysetPage(found, 2));
      await readKeysetPage(encodeKeysetCursor(place), 2, read);
      expect(asked).toEqual([
        [null, 3],
        [place, 3],
      ]);
      await expect(readKeysetPage('bm90IGEgY3Vyc29y', 2, read)).rejects.toMatchObject({
        code: ErrorCode.VALIDATION_ERROR,
      });
    });
  });
});
