import { rmSync } from 'node:fs';
import { testServer } from './global-setup';

/** Stops the PgBouncer and the embedded server global-setup started, if any, and removes its directory. */
export default async function globalTeardown(): Promise<void> {
  await testServer.testPgBouncer?.close();
  const handle = testServer.embeddedTestPostgres;
  if (!handle) return;
  await handle.server.stop();
  // Started by root in a folder PostgreSQL's account cannot enter, the cluster lives elsewhere.
  for (const dir of [handle.dir, handle.server.clusterDir]) rmSync(dir, { recursive: true, force: true });
}
