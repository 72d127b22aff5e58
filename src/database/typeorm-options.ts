import { join } from 'node:path';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/config';
import { FailFastClient } from './fail-fast-client';
import { SnakeNamingStrategy } from './snake-naming.strategy';

/** Compiled code loads dist/migrations/*.js; ts-node and ts-jest load migrations/*.ts from the repository. */
const runningFromSource = __filename.endsWith('.ts');
export const MIGRATIONS_GLOB = runningFromSource
  ? join(__dirname, '..', '..', 'migrations', '*.ts')
  : join(__dirname, '..', 'migrations', '*.js');

/**
 * How long the client waits for an answer beyond `statement_timeout`: a live server cancels the statement
 * first and the connection stays usable; only an answer that never comes (a dead peer) drops it.
 */
const ANSWER_GRACE_MS = 1_000;

/**
 * Pool settings that make a database that stopped answering (failover, network partition) fail requests
 * within seconds instead of the ~15 minutes the kernel takes to give up on a silent TCP connection.
 * `forMigrations`: no statement limit, as an index build or a table rewrite may legitimately run long.
 */
function poolSettings(config: Pick<AppConfig, 'database'>, forMigrations: boolean): Record<string, unknown> {
  const db = config.database;
  const statementLimits = forMigrations
    ? {}
    : { statement_timeout: db.queryTimeoutMs, query_timeout: db.queryTimeoutMs + ANSWER_GRACE_MS };
  return {
    max: db.poolSize,
    application_name: 'classroom-task-service',
    Client: FailFastClient,
    connectionTimeoutMillis: db.connectTimeoutMs,
    idleTimeoutMillis: db.idleTimeoutMs,
    idle_in_transaction_session_timeout: db.idleInTransactionTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: db.keepAliveMs,
    ...statementLimits,
  };
}

/** One definition of the connection, shared by the app, the TypeORM CLI and the operator CLI. */
export function buildDataSourceOptions(
  config: Pick<AppConfig, 'database'>,
  databaseUrl: string,
  { forMigrations = false }: { forMigrations?: boolean } = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
    migrations: [MIGRATIONS_GLOB],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    namingStrategy: new SnakeNamingStrategy(),
    extra: poolSettings(config, forMigrations),
  };
}
