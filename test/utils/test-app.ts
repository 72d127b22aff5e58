import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { DataSource } from 'typeorm';
import type { AppExtension } from '../../src/app.module';
import type { Clock } from '../../src/config/clock';
import { createApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/config/config';
import { prepareDataDir } from '../../src/config/data-dir';
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

export interface TestAppOptions {
  /**
   * Use this existing database instead (several instances, or a restart, against one database); the caller
   * created it and drops it, `close()` leaves it.
   */
  databaseUrl?: string;
  /**
   * Modules of the test tree mounted beside the core ones (`test/extension/`); their migrations run at the
   * app's start, under the production migration lock, on the database cloned from the core's template.
   */
  extensions?: readonly AppExtension[];
  /** The time schedules and deliveries go by (`MovableClock` of `./clock`); the system clock by default. */
  clock?: Clock;
}

/** Boots the real AppModule against a fresh database cloned from the migrated template. */
export async function createTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const database = options.databaseUrl
    ? null
    : await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
  const databaseUrl = options.databaseUrl ?? withDatabase(adminUrl, database!);
  const dataDir = mkdtempSync(join(tmpdir(), 'cts-test-'));
  const config = prepareDataDir(
    loadConfig({
      ...TEST_ENV,
      DATA_DIR: dataDir,
      ...env,
      // A test that sets DATABASE_POOLER chose its connections itself.
      ...(env.DATABASE_POOLER ? { DATABASE_URL: databaseUrl } : databaseEnv(databaseUrl)),
    }),
  );
  const app = await createApp(config, databaseUrl, {
    extensions: options.extensions,
    clock: options.clock,
  });
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

/**
 * The database variables of a test app on `databaseUrl`: through the test run's PgBouncer
 * (TEST_POOLER=pgbouncer) when the URL is of the test server, the direct URL serving the sessions.
 */
export function databaseEnv(databaseUrl: string): Record<string, string> {
  const poolerPort = process.env.TEST_POOLER_PORT;
  const server = new URL(process.env.TEST_ADMIN_DATABASE_URL!);
  const direct = new URL(databaseUrl);
  if (!poolerPort || direct.host !== server.host) return { DATABASE_URL: databaseUrl };
  const pooled = new URL(databaseUrl);
  pooled.hostname = '127.0.0.1';
  pooled.port = poolerPort;
  return {
    DATABASE_URL: pooled.toString(),
    DATABASE_DIRECT_URL: databaseUrl,
    DATABASE_POOLER: 'transaction',
  };
}

/**
 * Stands for the object `current()` answers once a `beforeAll` has made it, so a shared setup helper can hand
 * a test file its `ctx` before the app exists. Using it outside the tests (at describe time) fails clearly.
 */
export function lateBound<T extends object>(what: string, current: () => T | undefined): T {
  const target = (): T => {
    const value = current();
    if (!value) throw new Error(`${what} exists only from beforeAll on: use it inside hooks and tests`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_, property) => Reflect.get(target(), property),
    set: (_, property, value) => Reflect.set(target(), property, value),
  });
}

/** Runs `start` before the tests of the enclosing describe (or file) and closes what it made after them. */
export function beforeAllTests<T extends { close(): Promise<void> }>(
  start: () => Promise<T>,
): () => T | undefined {
  let current: T | undefined;
  beforeAll(async () => {
    current = await start();
  });
  afterAll(async () => current?.close());
  return () => current;
}

/** A test app for the tests of the enclosing describe (or file): booted before them, closed after them. */
export function useTestApp(env: Record<string, string> = {}, options: TestAppOptions = {}): TestApp {
  return lateBound(
    'The test app',
    beforeAllTests(() => createTestApp(env, options)),
  );
}
