import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/config';
import { buildDataSourceOptions } from '../../src/database/typeorm-options';
import { waitFor } from './wait';

const MIGRATIONS_DIR = join(__dirname, '..', '..', 'migrations');

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * Template name changes whenever a migration or a helper of them (`migrations/lib/`) changes, so a stale
 * template is never reused.
 */
export function templateName(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR, { recursive: true, encoding: 'utf8' }).sort()) {
    const path = join(MIGRATIONS_DIR, file);
    if (statSync(path).isFile()) hash.update(file).update(readFileSync(path));
  }
  return `cts_template_${hash.digest('hex').slice(0, 16)}`;
}

/** Runs `work` with a plain connection to `url`, outside any app's pool. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates the migrated template database once (under an advisory lock, so parallel runs agree). */
export async function ensureTemplate(adminUrl: string): Promise<string> {
  const template = templateName();
  await withClient(adminUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock(823746)');
    try {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (exists.rowCount) return;
      const building = `${template}_build_${randomBytes(4).toString('hex')}`;
      await client.query(`CREATE DATABASE "${building}"`);
      const dataSource = new DataSource(
        buildDataSourceOptions(
          loadConfig({ DATA_DIR: '/tmp/cts-test-data' }),
          withDatabase(adminUrl, building),
        ),
      );
      await dataSource.initialize();
      await dataSource.runMigrations();
      await dataSource.destroy();
      await client.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
      await client.query(`ALTER DATABASE "${template}" WITH IS_TEMPLATE true`);
    } finally {
      await client.query('SELECT pg_advisory_unlock(823746)');
    }
  });
  return template;
}

/** A fresh, migrated database for one test file. */
export async function createTestDatabase(adminUrl: string, template: string): Promise<string> {
  const name = `cts_test_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return name;
}

export async function dropTestDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Resolves once `count` sessions of the database of `db` wait for a lock (to stage a race step by step). */
export async function waitForLockWaiters(db: DataSource, count: number): Promise<void> {
  const waiting = async (): Promise<boolean> => {
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return n >= count;
  };
  await waitFor(`${count} sessions waiting for a lock`, waiting, 10_000, 10);
}

/**
 * Stages a request racing another transaction: `sql` runs in a transaction of its own, one statement at a
 * time; the first takes a lock, the request starts, and once it waits for that lock the other statements run
 * and the transaction commits. Answers the request's response.
 */
export async function raceAgainstTransaction<T>(
  db: DataSource,
  sql: [string, unknown[]][],
  request: () => PromiseLike<T>,
): Promise<T> {
  const runner = db.createQueryRunner();
  await runner.startTransaction();
  try {
    const [[lockSql, lockParams], ...rest] = sql;
    await runner.query(lockSql, lockParams);
    const answer = Promise.resolve(request());
    await waitForLockWaiters(db, 1);
    for (const [text, params] of rest) await runner.query(text, params);
    await runner.commitTransaction();
    return await answer;
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    await runner.release();
  }
}
