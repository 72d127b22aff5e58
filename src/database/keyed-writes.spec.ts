import { DataSource } from 'typeorm';
import { useTestDataSource } from '../../test/utils/test-data-source';
import { isWrite } from './keyed-writes';
import { rows } from './sql';
import { Transactions, withStepBeforeEachCommit } from './transactions';

describe('keyed writes (real PostgreSQL)', () => {
  let db: DataSource;
  let transactions: Transactions;

  useTestDataSource((created) => {
    db = created;
    transactions = new Transactions(db);
  });

  beforeAll(() => rows(db, 'CREATE TABLE IF NOT EXISTS keyed_probe (value text)'));

  /** Runs `work` as a keyed request whose step counts commits and whose stray writes are refused. */
  async function keyed<T>(work: () => Promise<T>): Promise<{ result: T; marks: number }> {
    let marks = 0;
    const result = await withStepBeforeEachCommit(
      async () => void (marks += 1),
      (statement) => {
        throw new Error(`stray write: ${statement}`);
      },
      work,
    );
    return { result, marks };
  }

  it('refuses a keyed write on autocommit before it is sent, and lets reads pass', async () => {
    await expect(keyed(() => rows(db, `INSERT INTO keyed_probe VALUES ('autocommit')`))).rejects.toThrow(
      /stray write: INSERT INTO keyed_probe/,
    );
    await expect(keyed(() => rows(db, 'SELECT count(*) FROM keyed_probe'))).resolves.toEqual({
      result: [{ count: '0' }],
      marks: 0,
    });
    expect(await rows(db, `SELECT value FROM keyed_probe`)).toEqual([]);
  });

  it('lets a keyed write through in Transactions.run (marking it) and runAside, and writeOne runs it in one', async () => {
    const inRun = await keyed(() =>
      transactions.run((tx) => rows(tx, `INSERT INTO keyed_probe VALUES ('run')`)),
    );
    expect(inRun.marks).toBe(1);
    const aside = await keyed(() =>
      transactions.runAside((tx) => rows(tx, `INSERT INTO keyed_probe VALUES ('aside')`)),
    );
    expect(aside.marks).toBe(0);
    const one = await keyed(() =>
      transactions.writeOne((tx) => rows(tx, `INSERT INTO keyed_probe VALUES ('one')`)),
    );
    expect(one.marks).toBe(1);
    // Without a key, writeOne is the one statement on autocommit.
    await transactions.writeOne((autocommit) => rows(autocommit, `INSERT INTO keyed_probe VALUES ('plain')`));
    expect(
      (await rows<{ value: string }>(db, `SELECT value FROM keyed_probe`)).map((row) => row.value).sort(),
    ).toEqual(['aside', 'one', 'plain', 'run']);
  });

  it("refuses a write on autocommit made inside a transaction's work: it is not the transaction's", async () => {
    await expect(
      keyed(() => transactions.run(() => rows(db, `UPDATE keyed_probe SET value = 'x'`))),
    ).rejects.toThrow(/stray write: UPDATE keyed_probe/);
  });

  it('tells writes from reads', () => {
    for (const write of [
      'INSERT INTO t VALUES (1)',
      '  update t set a = 1',
      'DELETE FROM t',
      'WITH a AS (UPDATE t x SET y = 1 RETURNING 1) SELECT 1',
      'WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a',
      'WITH gone AS (DELETE FROM t RETURNING 1) SELECT count(*) FROM gone',
      'CREATE TABLE t (a int)',
    ])
      expect([write, isWrite(write)]).toEqual([write, true]);
    for (const read of [
      'SELECT updated_at FROM t',
      'SELECT 1 FROM t FOR UPDATE',
      'WITH a AS (SELECT * FROM t FOR NO KEY UPDATE) SELECT * FROM a',
      'START TRANSACTION',
      'COMMIT',
    ])
      expect([read, isWrite(read)]).toEqual([read, false]);
  });
});
