import { bool, ConfigError, Env, int, str, url } from './env';

/**
 * PostgreSQL.
 * - `DATABASE_URL` (unset: the embedded PostgreSQL under `DATA_DIR`).
 * - `DATABASE_POOL_SIZE` (`10`), `MIGRATIONS_RUN` (`true`).
 * - `DATABASE_CONNECT_TIMEOUT_MS` (`5000`), `DATABASE_QUERY_TIMEOUT_MS` (`4000`),
 *   `DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS` (`60000`), `DATABASE_IDLE_TIMEOUT_MS` (`10000`),
 *   `DATABASE_KEEPALIVE_MS` (`10000`): a database that stops answering fails requests within seconds.
 * - `DATABASE_BULK_QUERY_TIMEOUT_MS` (`60000`): the limit of set-based statements over a whole class
 *   (notification fan-out, reminders), which the interactive limit above would cut short in a large class.
 * - `DATABASE_POOLER` (`none`): `transaction` when `DATABASE_URL` is a transaction-mode pooler (PgBouncer,
 *   RDS Proxy): no named prepared statements, no session settings; `DATABASE_DIRECT_URL` (the same database
 *   without the pooler, required then) serves what needs a session: migrations, LISTEN, session locks.
 */
export interface DatabaseConfig {
  database: {
    /** null: start the embedded PostgreSQL under `dataDir`. */
    url: string | null;
    /** Connections that need a session (migrations, LISTEN, session advisory locks); null: `url`. */
    directUrl: string | null;
    /** `transaction`: `url` is a transaction-mode pooler, which keeps no session between transactions. */
    pooler: 'none' | 'transaction';
    poolSize: number;
    migrationsRun: boolean;
    /** Opening a connection, or waiting for a free one of the pool, fails after this long. */
    connectTimeoutMs: number;
    /** PostgreSQL cancels a statement after this long; the client gives up on its answer a little later. */
    queryTimeoutMs: number;
    /** The same for set-based statements over a whole class (`bulkRows`), instead of `queryTimeoutMs`. */
    bulkQueryTimeoutMs: number;
    /** PostgreSQL ends a session whose transaction stays idle this long. */
    idleInTransactionTimeoutMs: number;
    /** The pool closes a connection unused this long. */
    idleTimeoutMs: number;
    /** TCP keepalive probes start after this much silence on a connection. */
    keepAliveMs: number;
  };
}

const POSTGRES_URL = ['postgres:', 'postgresql:'];

export function databaseConfig(env: Env): DatabaseConfig {
  const databaseUrl = url(env, 'DATABASE_URL', null, POSTGRES_URL);
  const directUrl = url(env, 'DATABASE_DIRECT_URL', null, POSTGRES_URL);
  const pooler = str(env, 'DATABASE_POOLER', 'none');
  if (pooler !== 'none' && pooler !== 'transaction') {
    throw new ConfigError('DATABASE_POOLER', `must be "none" or "transaction", got "${pooler}"`);
  }
  if (directUrl !== null && databaseUrl === null) {
    throw new ConfigError(
      'DATABASE_DIRECT_URL',
      'needs DATABASE_URL (the embedded PostgreSQL has no pooler)',
    );
  }
  // Without a direct connection LISTEN would go through the pooler, which never delivers its notifications.
  if (pooler === 'transaction' && directUrl === null) {
    throw new ConfigError('DATABASE_DIRECT_URL', 'is required when DATABASE_POOLER=transaction');
  }
  return {
    database: {
      url: databaseUrl,
      directUrl,
      pooler,
      poolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 500),
      migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
      connectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
      queryTimeoutMs: int(env, 'DATABASE_QUERY_TIMEOUT_MS', 4_000, 100, 3_600_000),
      bulkQueryTimeoutMs: int(env, 'DATABASE_BULK_QUERY_TIMEOUT_MS', 60_000, 100, 3_600_000),
      idleInTransactionTimeoutMs: int(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
      idleTimeoutMs: int(env, 'DATABASE_IDLE_TIMEOUT_MS', 10_000, 100, 3_600_000),
      keepAliveMs: int(env, 'DATABASE_KEEPALIVE_MS', 10_000, 1_000, 3_600_000),
    },
  };
}
