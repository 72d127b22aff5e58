import type { LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config';
import { buildDataSourceOptions, MigrationClass } from './typeorm-options';

/** Any constant shared by every instance; only migrations take this advisory lock. */
const MIGRATIONS_LOCK_KEY = 7_231_004;

/**
 * Applies pending migrations while holding a PostgreSQL advisory lock, so instances starting together apply
 * each migration once: the others wait, then find nothing pending. TypeORM itself does not lock.
 * `extraMigrations`: those of the extensions the app mounts, beside the files of `migrations/`.
 */
export async function runMigrationsLocked(
  config: AppConfig,
  databaseUrl: string,
  logger: LoggerService,
  extraMigrations: readonly MigrationClass[] = [],
): Promise<void> {
  // The lock lives on its own connection: the pool may hold a single one (DATABASE_POOL_SIZE=1).
  const lock = new Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: config.database.connectTimeoutMs,
    keepAlive: true,
  });
  await lock.connect();
  const dataSource = new DataSource(
    buildDataSourceOptions(config, databaseUrl, { forMigrations: true, extraMigrations }),
  );
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATIONS_LOCK_KEY]);
    await dataSource.initialize();
    const applied = await dataSource.runMigrations();
    if (applied.length)
      logger.log(`Applied migrations: ${applied.map((m) => m.name).join(', ')}`, 'Migrations');
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await lock.end();
  }
}
