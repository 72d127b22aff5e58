import { PgBouncer, startPgBouncer } from '../fakes/pgbouncer';
import { startTcpRelay, TcpRelay } from '../fakes/tcp-relay';
import { createClassWithMembers } from '../utils/classes';
import { createTestDatabase, dropTestDatabase, withDatabase } from '../utils/database';
import { createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { waitFor } from '../utils/wait';

/**
 * The service behind PgBouncer in transaction mode (DATABASE_POOLER=transaction): every transaction may run
 * on another server connection, shared with the other clients.
 */

const adminUrl = (): string => process.env.TEST_ADMIN_DATABASE_URL!;
/** Each setup starts PgBouncer and up to two apps: more than the default patience on a busy machine. */
const SETUP_MS = 120_000;

/** Limits PostgreSQL shows as set, not rounded to seconds or minutes. */
const ODD_LIMITS = { DATABASE_QUERY_TIMEOUT_MS: '4321', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '5432' };

/** The app through `bouncer`, sessions direct to `directUrl`. */
const behind = (bouncer: PgBouncer, directUrl: string, env: Record<string, string> = {}) =>
  createTestApp(
    { ...env, DATABASE_DIRECT_URL: directUrl, DATABASE_POOLER: 'transaction' },
    { databaseUrl: bouncer.pooled(directUrl) },
  );

describe('behind a transaction-mode pooler with one server connection, shared by two instances', () => {
  let bouncer: PgBouncer;
  let database: string;
  let directUrl: string;
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    database = await createTestDatabase(adminUrl(), process.env.TEST_TEMPLATE_DATABASE!);
    directUrl = withDatabase(adminUrl(), database);
    bouncer = await startPgBouncer(adminUrl(), { poolSize: 1 });
    first = await behind(bouncer, directUrl, ODD_LIMITS);
    second = await behind(bouncer, directUrl, ODD_LIMITS);
  }, SETUP_MS);
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await bouncer?.close();
    await dropTestDatabase(adminUrl(), database);
  });

  it('serves reads the direct connection prepares by name, alternating instances on the one connection', async () => {
    const { cls, owner, member } = await createClassWithMembers(first);
    const task = await createTask(first, cls.id, owner);
    // Each read would prepare a named statement on the one server connection: the second instance would then
    // find it prepared by the first (42P05), or an instance one that another connection prepared (26000).
    for (let round = 0; round < 3; round += 1) {
      for (const app of [first, second, first, second]) {
        await app.http.get(`/tasks/${task.id}`).set('Authorization', member.auth).expect(200);
        await app.http.get(`/classes/${cls.id}/tasks`).set('Authorization', member.auth).expect(200);
        await app.http.get('/tasks/mine').set('Authorization', member.auth).expect(200);
      }
    }
  });

  it('holds the statement and idle-in-transaction limits in each transaction, and leaves nothing behind', async () => {
    const limits = await first.db.transaction((manager) =>
      manager.query<{ statement: string; idle: string }[]>(
        `SELECT current_setting('statement_timeout') AS statement,
                current_setting('idle_in_transaction_session_timeout') AS idle`,
      ),
    );
    expect(limits).toEqual([
      {
        statement: `${first.config.database.queryTimeoutMs}ms`,
        idle: `${first.config.database.idleInTransactionTimeoutMs}ms`,
      },
    ]);
    // The same server connection, next client: the server's defaults again.
    const after = await second.db.query<{ statement: string }[]>(
      `SELECT current_setting('statement_timeout') AS statement`,
    );
    expect(after).toEqual([{ statement: '0' }]);
  });

  it(
    'takes no session lock through the pooler: a third instance starts while two run, and no lock stays',
    async () => {
      const third = await behind(bouncer, directUrl);
      await third.close();
      const locks = await first.db.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database =
         (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      expect(locks).toEqual([{ n: 0 }]);
    },
    SETUP_MS,
  );
});

describe('behind a transaction-mode pooler whose server goes silent', () => {
  let relay: TcpRelay;
  let bouncer: PgBouncer;
  let database: string;
  let app: TestApp;
  beforeAll(async () => {
    database = await createTestDatabase(adminUrl(), process.env.TEST_TEMPLATE_DATABASE!);
    const server = new URL(adminUrl());
    relay = await startTcpRelay({ host: server.hostname, port: Number(server.port || 5432) });
    const relayed = new URL(adminUrl());
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    // The pooler queues a client at most a second for a server connection, within the app's connect timeout.
    bouncer = await startPgBouncer(relayed.toString(), {
      queryWaitTimeoutSeconds: 1,
      settings: { server_connect_timeout: 2 },
    });
    const directUrl = withDatabase(relayed.toString(), database);
    app = await behind(bouncer, directUrl, {
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
      DATABASE_QUERY_TIMEOUT_MS: '1000',
      AUTH_LISTENER_HEARTBEAT_MS: '500',
    });
  }, SETUP_MS);
  afterAll(async () => {
    // The relay keeps the connections it silenced open for ever (a real network's keepalive ends them):
    // closing it first ends them, so nothing the app's shutdown waits for hangs on one.
    await relay?.close();
    await app?.close();
    await bouncer?.close();
    await dropTestDatabase(adminUrl(), database);
  }, SETUP_MS);

  it('answers 503 with Retry-After within the connect timeout, and recovers once the server answers', async () => {
    const { owner } = await createClassWithMembers(app);
    await app.http.get('/classes').set('Authorization', owner.auth).expect(200);
    relay.blackhole();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const started = Date.now();
      const res = await app.http.get('/classes').set('Authorization', owner.auth).timeout(10_000);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(Date.now() - started).toBeLessThan(app.config.database.connectTimeoutMs + 1_000);
    }
    relay.resume();
    await waitFor(
      'the app to answer again',
      async () => (await app.http.get('/classes').set('Authorization', owner.auth)).status === 200,
      20_000,
      200,
    );
  });
});

describe('a direct connection', () => {
  it(
    'keeps named prepared statements',
    async () => {
      const ctx = await createTestApp({ DATABASE_POOL_SIZE: '1', DATABASE_POOLER: 'none' });
      try {
        const { cls, owner } = await createClassWithMembers(ctx);
        const task = await createTask(ctx, cls.id, owner);
        await ctx.http.get(`/tasks/${task.id}`).set('Authorization', owner.auth).expect(200);
        const prepared = await statementsPreparedBy(ctx);
        expect(prepared).toContain('tasks.detail');
      } finally {
        await ctx.close();
      }
    },
    SETUP_MS,
  );
});

/** Names of the statements prepared on the app's pooled connection (one connection: DATABASE_POOL_SIZE=1). */
async function statementsPreparedBy(ctx: TestApp): Promise<string[]> {
  const rows = await ctx.db.query<{ name: string }[]>('SELECT name FROM pg_prepared_statements');
  return rows.map((row) => row.name);
}
