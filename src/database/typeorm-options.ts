import { join } from 'node:path';
import pg, { type ClientConfig, type PoolConfig } from 'pg';
import { DatabasePool, PoolObserver } from './connection-failures';
import { DataSource, DataSourceOptions, MigrationInterface } from 'typeorm';
import { AppConfig } from '../config/config';
import { FailFastClient, TransactionPoolerClient } from './fail-fast-client';
import { SnakeNamingStrategy } from './snake-naming.strategy';
import { transactionLimits } from './transaction-limits';

/** Compiled code loads dist/migrations/*.js; ts-node and ts-jest load migrations/*.ts from the repository. */
const runningFromSource = __filename.endsWith('.ts');
export const MIGRATIONS_GLOB = runningFromSource
  ? join(__dirname, '..', '..', 'migrations', '*.ts')
  : join(__dirname, '..', 'migrations', '*.js');

/** A TypeORM migration class, as an extension of the app brings it (`AppExtension` of `app.module.ts`). */
export type MigrationClass = new () => MigrationInterface;

/**
 * How long the client waits for an answer beyond `statement_timeout`: a live server cancels the statement
 * first and the connection stays usable; only an answer that never comes (a dead peer) drops it.
 */
export const ANSWER_GRACE_MS = 1_000;

/** What a pool's connections are for. */
interface PoolUse {
  /** `statement_timeout` and the client's answer deadline; off where one statement may run for long. */
  statementLimits: boolean;
  /** Through the transaction-mode pooler of DATABASE_POOLER: no session state, no named statements. */
  pooled: boolean;
}

/**
 * Pool settings that make a database that stopped answering (failover, network partition) fail requests
 * within seconds instead of the ~15 minutes the kernel takes to give up on a silent TCP connection.
 * Through a transaction-mode pooler the server limits are not startup parameters (poolers refuse them):
 * `transactionLimits` sets them in each transaction, and the role's settings cover single statements.
 */
export function poolSettings(config: Pick<AppConfig, 'database'>, use: PoolUse): PoolConfig {
  const db = config.database;
  return {
    ...connectionSettings(config, use),
    max: db.poolSize,
    Client: use.pooled ? TransactionPoolerClient : FailFastClient,
    idleTimeoutMillis: db.idleTimeoutMs,
  };
}

/** The settings of one connection of `poolSettings`, for a client outside the pools. */
export function connectionSettings(config: Pick<AppConfig, 'database'>, use: PoolUse): ClientConfig {
  const db = config.database;
  const serverLimits = use.pooled
    ? {}
    : {
        idle_in_transaction_session_timeout: db.idleInTransactionTimeoutMs,
        ...(use.statementLimits ? { statement_timeout: db.queryTimeoutMs } : {}),
      };
  return {
    application_name: 'classroom-task-service',
    connectionTimeoutMillis: db.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: db.keepAliveMs,
    ...(use.statementLimits ? { query_timeout: db.queryTimeoutMs + ANSWER_GRACE_MS } : {}),
    ...serverLimits,
  };
}

/** Whether the app's pool goes through a transaction-mode pooler. */
export const isPooled = (config: Pick<AppConfig, 'database'>): boolean =>
  config.database.pooler === 'transaction';

/**
 * The URL of connections that need a session of their own (migrations and their lock, LISTEN, session
 * advisory locks): DATABASE_DIRECT_URL when set, else `databaseUrl` (DATABASE_URL or the embedded server's).
 */
export const sessionUrl = (config: Pick<AppConfig, 'database'>, databaseUrl: string): string =>
  config.database.directUrl ?? databaseUrl;

/** The URL `dataSource` connects with (DATABASE_URL or the embedded server's). */
export function dataSourceUrl(dataSource: DataSource): string {
  const { options } = dataSource;
  if (options.type !== 'postgres' || !options.url) throw new Error('The data source has no PostgreSQL URL');
  return options.url;
}

/**
 * One definition of the connection, shared by the app, the TypeORM CLI and the operator CLI.
 * `forMigrations`: no statement limit, as an index build or a table rewrite may legitimately run long; and a
 * session of its own, so `databaseUrl` must then be the session URL. `extraMigrations`: those of the mounted
 * extensions, run with the files of `migrations/` in timestamp order.
 */
export function buildDataSourceOptions(
  config: Pick<AppConfig, 'database'>,
  databaseUrl: string,
  {
    forMigrations = false,
    extraMigrations = [],
    observer,
  }: {
    forMigrations?: boolean;
    extraMigrations?: readonly MigrationClass[];
    /** The app pool's metrics (`Metrics.poolObserver`). */
    observer?: PoolObserver;
  } = {},
): DataSourceOptions {
  const pooled = !forMigrations && isPooled(config);
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
    migrations: [MIGRATIONS_GLOB, ...extraMigrations],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    namingStrategy: new SnakeNamingStrategy(),
    // pg with the pool whose failures to connect say they come from the database (`connection-failures.ts`).
    driver: { ...pg, Pool: DatabasePool },
    extra: { ...poolSettings(config, { statementLimits: !forMigrations, pooled }), observer },
    subscribers: pooled ? [transactionLimits(config.database)] : [],
  };
}
