import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgres, startEmbeddedPostgres } from '../../src/database/embedded';
import { PgBouncer, startPgBouncer } from '../fakes/pgbouncer';
import { ensureBuilt } from './build';
import { ensureTemplate } from './database';

/** Handed to global-teardown, which runs in this same process. */
export const testServer = globalThis as typeof globalThis & {
  embeddedTestPostgres?: { server: EmbeddedPostgres; dir: string };
  testPgBouncer?: PgBouncer;
};

/**
 * Runs once before all test files: picks the PostgreSQL server (DATABASE_URL, else an embedded one in a
 * temporary directory on a free port), builds the migrated template database every test file clones, and
 * builds dist/ for the tests that start the built service; with TEST_POOLER=pgbouncer, a PgBouncer in front of it.
 * Workers read the server from TEST_ADMIN_DATABASE_URL.
 */
export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'cts-test-pg-'));
    // Passable, so that a root test run can hand the cluster to an unprivileged account.
    chmodSync(dir, 0o711);
    const server = await startEmbeddedPostgres({ dir: join(dir, 'postgres'), ephemeral: true }).catch(
      (error) => {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      },
    );
    testServer.embeddedTestPostgres = { server, dir };
    adminUrl = server.url('postgres');
  }
  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  process.env.TEST_TEMPLATE_DATABASE = await ensureTemplate(adminUrl);
  // TEST_POOLER=pgbouncer: the test apps reach their databases through PgBouncer in transaction mode.
  if (process.env.TEST_POOLER === 'pgbouncer') {
    testServer.testPgBouncer = await startPgBouncer(adminUrl);
    process.env.TEST_POOLER_PORT = String(testServer.testPgBouncer.port);
  }
  ensureBuilt();
}
