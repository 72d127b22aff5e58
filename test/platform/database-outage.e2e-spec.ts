import { randomBytes } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AUTH_USER_LISTENER_NAME, AuthUserCache } from '../../src/auth/auth-user.cache';
import { buildDataSourceOptions } from '../../src/database/typeorm-options';
import { startWebhookReceiver, WebhookReceiver } from '../fakes/webhook-receiver';
import { addMember, createClass } from '../utils/classes';
import { FAST_NOTIFICATIONS, setPref, waitFor } from '../utils/notifications';
import { FAIL_FAST, loggedBy, RelayedApp, startRelayedApp } from '../utils/relayed-app';
import { seedMembers, seedTask } from '../utils/submissions';
import { createTask } from '../utils/tasks';
import { createTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

/** A request hanging on a silent connection is cut here, so that the test fails instead of waiting. */
const REQUEST_PATIENCE_MS = 10_000;

describe('a silent database: every connection stops answering', () => {
  let app: RelayedApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    app = await startRelayedApp({ ...FAIL_FAST, ...FAST_NOTIFICATIONS });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app.close();
    await receiver.close();
  });

  const listClasses = (user: TestUser) =>
    app.ctx.http.get('/classes').set('Authorization', user.auth).timeout(REQUEST_PATIENCE_MS);

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After at once, logs the outage once, and recovers by itself', async () => {
    const { ctx, relay } = app;
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    const cls = await createClass(ctx, owner, { name: 'Physics' });
    await addMember(ctx, cls.id, member);
    const hook = `/hook-${randomBytes(4).toString('hex')}`;
    const pref = await setPref(ctx, member, { channel: 'WEBHOOK', address: receiver.url(hook) });
    receiver.setSecret(hook, pref.secret!);
    // Busy enough that the pool holds several connections, which all fall silent.
    await Promise.all(Array.from({ length: 6 }, () => listClasses(owner).expect(200)));

    const warned = jest.spyOn(Logger.prototype, 'warn');
    const failed = jest.spyOn(Logger.prototype, 'error');
    const told = jest.spyOn(Logger.prototype, 'log');
    relay.blackhole();
    const started = Date.now();
    // More requests than the pool has connections: some wait for one, some open new ones, some get a silent one.
    const answers = await Promise.all(Array.from({ length: 12 }, () => listClasses(owner)));
    const outageAnswerMs = Date.now() - started;
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({
        error: 'Database unavailable, try again later',
        code: 'SERVICE_UNAVAILABLE',
      });
      expect(answer.headers['retry-after']).toBe('5');
    }
    // The query timeout and its 1 s of grace, with room for a busy machine: not the kernel's 15 minutes.
    expect(outageAnswerMs).toBeLessThan(5_000);
    await app.ctx.http.get('/health').timeout(REQUEST_PATIENCE_MS).expect(503);
    // Jobs keep ticking through the outage and requests keep failing: still the one warning.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await listClasses(owner).expect(503);
    expect(loggedBy(warned, 'Database')).toHaveLength(1);
    expect(failed).not.toHaveBeenCalled();

    relay.resume();
    const resumed = Date.now();
    await waitFor('a request to succeed', async () => (await listClasses(owner)).status === 200);
    const recoveryMs = Date.now() - resumed;
    expect(recoveryMs).toBeLessThan(5_000);
    await waitFor('the recovery to be logged', async () =>
      loggedBy(told, 'Database').some(([message]) => message === 'Database reachable again'),
    );
    expect(loggedBy(warned, 'Database')).toHaveLength(1);
    expect(failed).not.toHaveBeenCalled();

    // The delivery loop and the worker run again: a new task reaches the member's webhook.
    await createTask(ctx, cls.id, owner, { title: 'After the outage' });
    await waitFor('the webhook', async () => receiver.received.some((hit) => hit.path === hook));
  });
});

describe('a silent token-user cache listener', () => {
  let app: RelayedApp;
  beforeAll(async () => {
    app = await startRelayedApp(FAIL_FAST);
  });
  afterAll(() => app.close());

  const getMe = (user: TestUser) =>
    app.ctx.http.get('/users/me').set('Authorization', user.auth).timeout(REQUEST_PATIENCE_MS);
  const revokeBySql = (user: TestUser) =>
    app.ctx.db.query(`UPDATE users SET token_version = token_version + 1 WHERE id = $1`, [user.id]);
  const refusedWithin = (user: TestUser, timeoutMs: number) =>
    waitFor('the token to be refused', async () => (await getMe(user)).status === 401, timeoutMs);

  it('stops trusting the cache within a heartbeat or two, and trusts it again once it listens again', async () => {
    const { ctx, relay } = app;
    const cache = ctx.app.get(AuthUserCache);
    const user = await createUser(ctx);
    await getMe(user).expect(200);
    expect(cache.get(user.id)).toBeDefined();

    const [listener] = await ctx.db.query(
      `SELECT client_port FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
      [AUTH_USER_LISTENER_NAME],
    );
    relay.blackholeUpstreamPort(listener.client_port);
    // Its notification is sent into the silence: only the heartbeat can tell the cache.
    await revokeBySql(user);
    const revoked = Date.now();
    await refusedWithin(user, 10_000);
    const staleMs = Date.now() - revoked;
    // AUTH_LISTENER_HEARTBEAT_MS is 500: one beat to send, one to wait for its answer; not the 60 s TTL.
    expect(staleMs).toBeLessThan(3_000);

    const again = await createUser(ctx);
    await waitFor('caching again', async () => {
      await getMe(again).expect(200);
      return cache.get(again.id);
    });
    await revokeBySql(again);
    await refusedWithin(again, 2_000);
  });
});

describe('the statement limit and long work', () => {
  it('lets a CSV export stream for longer than DATABASE_QUERY_TIMEOUT_MS allows one statement', async () => {
    const ctx = await createTestApp({ DATABASE_QUERY_TIMEOUT_MS: '300' });
    // Seeding takes longer than the app's own limit allows.
    const unlimited = new DataSource({ type: 'postgres', url: ctx.databaseUrl });
    try {
      await unlimited.initialize();
      await ctx.app.listen(0);
      const owner = await createUser(ctx);
      const { id: classId } = await createClass(ctx, owner, { name: 'C'.repeat(100) });
      const taskId = await seedTask(ctx, classId, { title: 'T'.repeat(200) });
      // About 8 MB of CSV: more than the socket buffers hold, so the cursor stays open while the client waits.
      await seedMembers({ ...ctx, db: unlimited }, classId, 20_000, 'n'.repeat(80));
      const { port } = ctx.app.getHttpServer().address() as AddressInfo;
      const path = `/tasks/${taskId}/submissions/export`;
      const download = await new Promise<{ complete: boolean; lines: number }>((resolve) => {
        httpGet({ port, path, headers: { Authorization: owner.auth } }, (response) => {
          const chunks: Buffer[] = [];
          const done = (complete: boolean) =>
            resolve({ complete, lines: Buffer.concat(chunks).toString().split('\r\n').length - 1 });
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => done(true));
          response.on('aborted', () => done(false));
          response.on('error', () => done(false));
          // A slow client: the cursor waits far longer than one statement may run.
          response.pause();
          setTimeout(() => response.resume(), 1_500);
        }).on('error', () => resolve({ complete: false, lines: 0 }));
      });
      // The header, the owner and the 20,000 members.
      expect(download).toEqual({ complete: true, lines: 20_002 });
    } finally {
      await unlimited.destroy();
      await ctx.close();
    }
  });
});

describe('the pool settings', () => {
  it('reach the pool and every session of the app, but not the migrations', async () => {
    const ctx = await createTestApp({
      DATABASE_CONNECT_TIMEOUT_MS: '2345',
      DATABASE_QUERY_TIMEOUT_MS: '4321',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '5432',
      DATABASE_IDLE_TIMEOUT_MS: '6543',
      DATABASE_KEEPALIVE_MS: '7000',
    });
    try {
      const [session] = await ctx.db.query(
        `SELECT current_setting('statement_timeout') AS statement,
                current_setting('idle_in_transaction_session_timeout') AS idle_in_transaction`,
      );
      expect(session).toEqual({ statement: '4321ms', idle_in_transaction: '5432ms' });
      // What TypeORM hands to pg's pool (`extra`), read through the public options of the data source.
      const { options } = ctx.db;
      expect(options.type === 'postgres' && options.extra).toMatchObject({
        connectionTimeoutMillis: 2345,
        query_timeout: 5321,
        idleTimeoutMillis: 6543,
        keepAlive: true,
        keepAliveInitialDelayMillis: 7000,
      });
      const migrations = buildDataSourceOptions(ctx.config, ctx.databaseUrl, { forMigrations: true });
      expect(migrations.extra).not.toHaveProperty('statement_timeout');
      expect(migrations.extra).not.toHaveProperty('query_timeout');
    } finally {
      await ctx.close();
    }
  });
});
