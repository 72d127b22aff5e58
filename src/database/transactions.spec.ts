import { DataSource } from 'typeorm';
import { useTestDataSource } from '../../test/utils/test-data-source';
import { TasksRepository } from '../tasks/tasks.repository';
import { one, rows } from './sql';
import { Transactions, Tx } from './transactions';

describe('Transactions (real PostgreSQL)', () => {
  let db: DataSource;
  let transactions: Transactions;
  let tasks: TasksRepository;
  const classId = '00000000-0000-4000-8000-000000000001';

  useTestDataSource((created) => {
    db = created;
    transactions = new Transactions(db);
    tasks = new TasksRepository(db);
  });

  /** Whether another session could take the class's graph lock now (it lets it go at once). */
  const graphLockFree = async (): Promise<boolean> =>
    (await one<{ free: boolean }>(
      db,
      `SELECT pg_try_advisory_xact_lock(hashtextextended('tasks.blocked_by:' || $1, 0)) AS free`,
      [classId],
    ))!.free;

  it('holds a lock taken through a Tx until the transaction ends', async () => {
    await transactions.run(async (tx) => {
      await tasks.lockGraph(tx, classId);
      expect(await graphLockFree()).toBe(false);
    });
    expect(await graphLockFree()).toBe(true);
  });

  it('commits what the work wrote, and rolls it back when the work fails', async () => {
    await rows(db, 'CREATE TABLE tx_probe (value text)');
    await transactions.run((tx) => rows(tx, `INSERT INTO tx_probe VALUES ('kept')`));
    await expect(
      transactions.run(async (tx) => {
        await rows(tx, `INSERT INTO tx_probe VALUES ('dropped')`);
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    expect(await rows(transactions.autocommit, 'SELECT value FROM tx_probe')).toEqual([{ value: 'kept' }]);
  });

  it('does not let the data source or a plain EntityManager stand in for a Tx (checked by tsc)', () => {
    const misuse = (tx: Tx): Promise<void>[] => [
      // @ts-expect-error each statement of the data source commits alone: the lock would end at once
      tasks.lockGraph(db, classId),
      // @ts-expect-error the data source's manager is no transaction either
      tasks.lockGraph(db.manager, classId),
      tasks.lockGraph(tx, classId),
    ];
    expect(typeof misuse).toBe('function');
  });
});
