import type { PoolClient, QueryConfig, QueryResultRow } from 'pg';
import { DataSource, EntityManager, QueryFailedError, QueryResult } from 'typeorm';
import { ANSWER_GRACE_MS } from './typeorm-options';

/**
 * Where a statement runs: the data source (a pooled connection per statement) or the EntityManager of a
 * transaction (its connection).
 */
export type Db = DataSource | EntityManager;

const preparedNames = new Map<string, string>();

/**
 * A read that runs on most requests, as a named prepared statement: each pooled connection parses and plans
 * it once and afterwards only binds and executes it. TypeORM sends every statement unnamed, so PostgreSQL
 * plans it again on every call (about 1.5 ms for the task summary statement, more than running it). Run on
 * the data source it runs by name on a pooled connection; inside a transaction its text runs unnamed on the
 * transaction's connection. Behind a transaction-mode pooler (DATABASE_POOLER) the client sends it unnamed.
 */
export class Prepared {
  constructor(
    readonly name: string,
    readonly text: string,
  ) {
    // pg keeps prepared statements per connection by name: one name must always mean the same text.
    if (preparedNames.has(name) && preparedNames.get(name) !== text)
      throw new Error(`Prepared statement ${name} defined twice`);
    preparedNames.set(name, text);
  }
}

export type Statement = string | Prepared;

interface Result<Row> {
  rows: Row[];
  affected: number;
}

async function execute<Row>(db: Db, statement: Statement, params: unknown[]): Promise<Result<Row>> {
  if (db instanceof DataSource && statement instanceof Prepared) {
    // A query runner's connection is the pooled pg client itself, which can run a statement by name.
    const runner = db.createQueryRunner();
    try {
      const client = (await runner.connect()) as PoolClient;
      const result = await client
        .query<Row & QueryResultRow>({ name: statement.name, text: statement.text, values: params })
        // Failed like any other statement, so that the error names the statement (a timed-out one is logged).
        .catch((error: Error) => {
          throw new QueryFailedError(statement.text, params, error);
        });
      return { rows: result.rows, affected: result.rowCount ?? 0 };
    } finally {
      await runner.release();
    }
  }
  const text = statement instanceof Prepared ? statement.text : statement;
  const manager = entityManager(db);
  // The structured result is the same for every command; `manager.query` answers UPDATE and DELETE as a
  // [rows, count] tuple and everything else as the rows.
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const result = (await runner.query(text, params, true)) as QueryResult<Row>;
    return { rows: result.records ?? [], affected: result.affected ?? 0 };
  } finally {
    if (runner !== manager.queryRunner) await runner.release();
  }
}

/** The EntityManager of `db`, for the entity API (its transaction's, or the data source's). */
export const entityManager = (db: Db): EntityManager => (db instanceof DataSource ? db.manager : db);

/** The rows a statement answers (its RETURNING rows for a write); typed as `Row`, not checked. */
export async function rows<Row>(db: Db, statement: Statement, params: unknown[] = []): Promise<Row[]> {
  return (await execute<Row>(db, statement, params)).rows;
}

/** The first row a statement answers, or null when it answers none. */
export async function one<Row>(db: Db, statement: Statement, params: unknown[] = []): Promise<Row | null> {
  return (await execute<Row>(db, statement, params)).rows[0] ?? null;
}

/**
 * A statement with its own answer deadline, in place of the client's: pg's per-query `query_timeout` (pg 8.13,
 * "specify query timeout on per-query basis"), which @types/pg declares for the client config only.
 * test/platform/driver-errors.e2e-spec.ts holds the driver to it in both directions.
 */
export interface StatementWithDeadline extends QueryConfig {
  query_timeout: number;
}

/**
 * The rows of a set-based statement over a whole class (a notification fan-out), which may take longer than
 * the pool's interactive limit: PostgreSQL's `statement_timeout` and the client's wait for the answer are
 * `limitMs` for this statement alone. It runs in `db`'s transaction (whose limit is restored afterwards), or
 * in a transaction of its own, since a limit set for one transaction ends with it (also behind a pooler).
 */
export async function bulkRows<Row>(
  db: Db,
  limitMs: number,
  text: string,
  params: unknown[] = [],
): Promise<Row[]> {
  const manager = entityManager(db);
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  const ownTransaction = !runner.isTransactionActive;
  const client = (await runner.connect()) as PoolClient;
  const limit = (value: string) =>
    client.query({ text: `SELECT set_config('statement_timeout', $1, true)`, values: [value] });
  try {
    if (ownTransaction) await runner.startTransaction();
    const [{ previous }] = (
      await client.query<{ previous: string }>(`SELECT current_setting('statement_timeout') AS previous`)
    ).rows;
    await limit(`${limitMs}ms`);
    const statement: StatementWithDeadline = {
      text,
      values: params,
      query_timeout: limitMs + ANSWER_GRACE_MS,
    };
    const result = await client.query<Row & QueryResultRow>(statement).catch((error: Error) => {
      throw new QueryFailedError(text, params, error);
    });
    if (ownTransaction) await runner.commitTransaction();
    else await limit(previous);
    return result.rows;
  } catch (error) {
    if (ownTransaction && runner.isTransactionActive)
      await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
    if (runner !== manager.queryRunner) await runner.release();
  }
}

/** The number of rows a write inserted, updated or deleted. */
export async function affected(db: Db, statement: Statement, params: unknown[] = []): Promise<number> {
  return (await execute<never>(db, statement, params)).affected;
}
