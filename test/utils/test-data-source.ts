import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/config';
import { buildDataSourceOptions } from '../../src/database/typeorm-options';
import { createTestDatabase, dropTestDatabase, withDatabase } from './database';

export interface TestDataSource {
  db: DataSource;
  close(): Promise<void>;
}

/** A DataSource on a fresh database cloned from the migrated template, without the application. */
export async function createTestDataSource(env: Record<string, string> = {}): Promise<TestDataSource> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
  const config = loadConfig({ DATA_DIR: '/tmp/cts-test-data', ...env });
  const db = new DataSource(buildDataSourceOptions(config, withDatabase(adminUrl, database)));
  await db.initialize();
  return {
    db,
    async close() {
      await db.destroy();
      await dropTestDatabase(adminUrl, database);
    },
  };
}
