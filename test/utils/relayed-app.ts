import { startTcpRelay, TcpRelay } from '../fakes/tcp-relay';
import { createTestDatabase, dropTestDatabase, withDatabase } from './database';
import { createTestApp, TestApp } from './test-app';

/** Short limits, so that a silent database shows within a test's patience. */
export const FAIL_FAST: Record<string, string> = {
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
  DATABASE_QUERY_TIMEOUT_MS: '1000',
  AUTH_LISTENER_HEARTBEAT_MS: '500',
};

export interface RelayedApp {
  ctx: TestApp;
  relay: TcpRelay;
  close(): Promise<void>;
}

/** The app on a fresh database that it reaches only through a relay the test controls. */
export async function startRelayedApp(env: Record<string, string>): Promise<RelayedApp> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  const database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
  const direct = new URL(withDatabase(adminUrl, database));
  const relay = await startTcpRelay({ host: direct.hostname, port: Number(direct.port || 5432) });
  const relayed = new URL(direct);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  const ctx = await createTestApp(env, { databaseUrl: relayed.toString() });
  return {
    ctx,
    relay,
    async close() {
      // The relay keeps the connections it silenced open for ever (a real network's keepalive ends them),
      // and closing a pool ends its idle connections politely, waiting for an answer: closed first, the
      // relay ends them, so the app's shutdown does not wait on one.
      await relay.close();
      await ctx.close();
      await dropTestDatabase(adminUrl, database);
    },
  };
}

/** The calls of a spied Logger method made by loggers of `context`, as their arguments. */
export function loggedBy(spy: jest.SpyInstance, context: string): unknown[][] {
  return spy.mock.calls.filter((_, i) => (spy.mock.contexts[i] as { context?: string }).context === context);
}
