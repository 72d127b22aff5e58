import { DataSource } from 'typeorm';
import { createTestDataSource, TestDataSource } from '../../test/utils/test-data-source';
import { QueryFailedError } from 'typeorm';
import { affected, bulkRows, one, Prepared, rows } from './sql';

describe('sql helper (real PostgreSQL)', () => {
  let source: TestDataSource;
  let db: DataSource;

  beforeAll(async () => {
    source = await createTestDataSource({ DATABASE_POOL_SIZE: '1' });
    db = source.db;
    await db.query(`CREATE TABLE sql_spec (id int PRIMARY KEY, label text NOT NULL)`);
  });

  afterAll(async () => {
    await source.close();
  });

  beforeEach(async () => {
    await db.query(`TRUNCATE sql_spec`);
    await db.query(`INSERT INTO sql_spec VALUES (1, 'a'), (2, 'b'), (3, 'c')`);
  });

  it('answers the rows of a SELECT and of a write with RETURNING, never a [rows, count] tuple', async () => {
    expect(await rows<{ id: number }>(db, `SELECT id FROM sql_spec ORDER BY id`)).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ]);
    const updated = await rows<{ id: number }>(
      db,
      `UPDATE sql_spec SET label = 'x' WHERE id >= $1 RETURNING id`,
      [2],
    );
    expect(updated.map((row) => row.id).sort()).toEqual([2, 3]);
    expect(await rows(db, `DELETE FROM sql_spec WHERE id = $1 RETURNING id`, [1])).toEqual([{ id: 1 }]);
    expect(await rows(db, `DELETE FROM sql_spec WHERE id = $1`, [1])).toEqual([]);
  });

  it('answers one row, or null when there is none', async () => {
    expect(await one<{ label: string }>(db, `SELECT label FROM sql_spec WHERE id = $1`, [2])).toEqual({
      label: 'b',
    });
    expect(await one(db, `SELECT label FROM sql_spec WHERE id = $1`, [9])).toBeNull();
  });

  it('counts the rows a write touched', async () => {
    expect(await affected(db, `UPDATE sql_spec SET label = 'y' WHERE id <= $1`, [2])).toBe(2);
    expect(await affected(db, `DELETE FROM sql_spec WHERE id = $1`, [9])).toBe(0);
    expect(await affected(db, `INSERT INTO sql_spec VALUES (4, 'd'), (5, 'e')`)).toBe(2);
    expect(await affected(db, `DELETE FROM sql_spec`)).toBe(5);
  });

  it("runs on a transaction's connection, so its writes roll back with it", async () => {
    await expect(
      db.transaction(async (manager) => {
        expect(await affected(manager, `DELETE FROM sql_spec WHERE id = 1`)).toBe(1);
        expect(await one(manager, `SELECT 1 FROM sql_spec WHERE id = 1`)).toBeNull();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await one(db, `SELECT 1 AS found FROM sql_spec WHERE id = 1`)).toEqual({ found: 1 });
  });

  it('runs a prepared statement by name on the pool, and by text inside a transaction', async () => {
    const byId = new Prepared('sql_spec.by_id', `SELECT label FROM sql_spec WHERE id = $1`);
    expect(await one(db, byId, [3])).toEqual({ label: 'c' });
    const prepared = await rows<{ name: string }>(db, `SELECT name FROM pg_prepared_statements`);
    expect(prepared).toEqual([{ name: 'sql_spec.by_id' }]);
    await db.transaction(async (manager) => {
      await affected(manager, `UPDATE sql_spec SET label = 'z' WHERE id = 3`);
      expect(await one(manager, byId, [3])).toEqual({ label: 'z' });
    });
  });

  it('refuses one statement name for two texts', () => {
    new Prepared('sql_spec.twice', 'SELECT 1');
    expect(() => new Prepared('sql_spec.twice', 'SELECT 2')).toThrow('defined twice');
  });

  describe('bulkRows', () => {
    const limitOf = async (tx: DataSource['manager']) =>
      (await one<{ limit: string }>(tx, `SELECT current_setting('statement_timeout') AS limit`))!.limit;

    it("gives the statement its own limit, longer than the pool's (4 s): a 4.5 s statement completes", async () => {
      expect(await bulkRows(db, 10_000, `SELECT pg_sleep(4.5), 1 AS done`)).toEqual([
        { pg_sleep: '', done: 1 },
      ]);
      await expect(rows(db, `SELECT pg_sleep(4.5)`)).rejects.toBeInstanceOf(QueryFailedError);
    }, 30_000);

    it("cancels a statement past its limit, and the pool's connection keeps the pool's limit", async () => {
      await expect(bulkRows(db, 200, `SELECT pg_sleep(2)`)).rejects.toThrow(/statement timeout/);
      expect(await one(db, `SELECT current_setting('statement_timeout') AS limit`)).toEqual({ limit: '4s' });
    });

    it("runs in the caller's transaction and restores its limit", async () => {
      await db.transaction(async (tx) => {
        const before = await limitOf(tx);
        await bulkRows(tx, 9_000, `INSERT INTO sql_spec VALUES (4, 'd') RETURNING id`);
        expect(await limitOf(tx)).toBe(before);
        await tx.query(`SELECT 1`);
      });
      expect(await one(db, `SELECT label FROM sql_spec WHERE id = 4`)).toEqual({ label: 'd' });
    });
  });
});
