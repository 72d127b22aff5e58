import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/config/config';
import { createTestDatabase, dropTestDatabase, withDatabase } from './database';

export interface TestApp {
  app: NestExpressApplication;
  http: TestAgent;
  db: DataSource;
  config: AppConfig;
  dataDir: string;
  databaseUrl: string;
  close(): Promise<void>;
}

/** Defaults for every test app; a test file passes overrides (e.g. SMTP_URL of its fake server). */
const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
  APP_URL: 'http://app.test',
  WEBHOOK_ALLOW_PRIVATE: 'true',
};

/**
 * Boots the real AppModule against a fresh database cloned from the migrated template.
 * `options.databaseUrl`: use that existing database instead (several instances, or a restart, against one
 * database); the caller created it and drops it, `close()` leaves it.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: { databaseUrl?: string } = {},
): Promise<TestApp> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const database = options.databaseUrl
    ? null
    : await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
  const databaseUrl = options.databaseUrl ?? withDatabase(adminUrl, database!);
  const dataDir = mkdtempSync(join(tmpdir(), 'cts-test-'));
  const config = loadConfig({ ...TEST_ENV, DATA_DIR: dataDir, ...env, DATABASE_URL: databaseUrl });
  const app = await createApp(config, databaseUrl);
  await app.init();
  return {
    app,
    http: request(app.getHttpServer()),
    db: app.get(DataSource),
    config,
    dataDir,
    databaseUrl,
    async close() {
      await app.close();
      if (database) await dropTestDatabase(adminUrl, database);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
