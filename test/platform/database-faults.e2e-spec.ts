import { Logger } from '@nestjs/common';
import { AUTH_USER_LISTENER_NAME } from '../../src/auth/auth-user.cache';
import { createClass } from '../utils/classes';
import { withClient } from '../utils/database';
import { FAIL_FAST, loggedBy, RelayedApp, startRelayedApp } from '../utils/relayed-app';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { sleep, waitFor } from '../utils/wait';

/** A request hanging on a silent connection is cut here, so that the test fails instead of waiting. */
const REQUEST_PATIENCE_MS = 15_000;
const OUTAGE_ANSWER = { error: 'Database unavailable, try again later', code: 'SERVICE_UNAVAILABLE' };

const get = (ctx: TestApp, path: string, user: TestUser) =>
  ctx.http.get(path).set('Authorization', user.auth).timeout(REQUEST_PATIENCE_MS);

/** Spies on the logger; `errors` and `warnings` are the calls made since. */
function spyOnLogs(): { warned: jest.SpyInstance; failed: jest.SpyInstance } {
  return { warned: jest.spyOn(Logger.prototype, 'warn'), failed: jest.spyOn(Logger.prototype, 'error') };
}

afterEach(() => jest.restoreAllMocks());

describe('a database that does not allow connections (ALTER DATABASE … ALLOW_CONNECTIONS false)', () => {
  it('answers 503 with Retry-After, logs the outage once and no stack, and recovers once allowed', async () => {
    const ctx = await createTestApp();
    const admin = process.env.TEST_ADMIN_DATABASE_URL!;
    const database = new URL(ctx.databaseUrl).pathname.slice(1);
    const allowConnections = (allow: boolean) =>
      withClient(admin, (client) =>
        client.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS ${allow ? 'true' : 'false'}`),
      );
    try {
      const user = await createUser(ctx);
      await get(ctx, '/classes', user).expect(200);
      const { warned, failed } = spyOnLogs();
      await allowConnections(false);
      // The app's connections end, as a restart or a failover ends them: it needs new ones, which are refused.
      await withClient(admin, (client) =>
        client.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = $1 AND application_name LIKE 'classroom-task-service%'`,
          [database],
        ),
      );
      const answers = await Promise.all(Array.from({ length: 5 }, () => get(ctx, '/classes', user)));
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.body).toEqual(OUTAGE_ANSWER);
        expect(answer.headers['retry-after']).toBe('5');
      }
      expect(loggedBy(warned, 'Database')).toHaveLength(1);
      expect(failed).not.toHaveBeenCalled();

      await allowConnections(true);
      await waitFor('a request to succeed', async () => (await get(ctx, '/classes', user)).status === 200);
      expect(failed).not.toHaveBeenCalled();
    } finally {
      await allowConnections(true);
      await ctx.close();
    }
  });
});

describe('connections reset under load, in the token check', () => {
  let app: RelayedApp;
  beforeAll(async () => {
    // No token-user cache: every request's token check reads its user through a pooled connection.
    app = await startRelayedApp({ ...FAIL_FAST, AUTH_CACHE_TTL_MS: '0' });
  });
  afterAll(() => app.close());

  it('answers 503, not 500 with a stack, when a pooled connection is reset mid-read', async () => {
    const { ctx, relay } = app;
    const user = await createUser(ctx);
    await Promise.all(Array.from({ length: 6 }, () => get(ctx, '/users/me', user).expect(200)));
    const { warned, failed } = spyOnLogs();

    // The token checks' reads are sent and wait for an answer when every connection is reset.
    relay.blackhole();
    const pending = Promise.all(Array.from({ length: 6 }, () => get(ctx, '/users/me', user).then((r) => r)));
    await sleep(300);
    relay.reset();
    relay.resume();
    const answers = await pending;

    for (const answer of answers.filter(({ status }) => status !== 200)) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual(OUTAGE_ANSWER);
      expect(answer.headers['retry-after']).toBe('5');
    }
    expect(answers.some(({ status }) => status === 503)).toBe(true);
    expect(failed).not.toHaveBeenCalled();
    expect(loggedBy(warned, 'Database')).toHaveLength(1);
    await waitFor('a request to succeed', async () => (await get(ctx, '/users/me', user)).status === 200);
  });
});

describe('a statement past DATABASE_QUERY_TIMEOUT_MS', () => {
  it('answers 500 and logs the statement, and is no outage', async () => {
    const ctx = await createTestApp({ DATABASE_QUERY_TIMEOUT_MS: '500' });
    try {
      const owner = await createUser(ctx);
      await createClass(ctx, owner, { name: 'Physics' });
      await get(ctx, '/users/me', owner).expect(200);
      const { warned, failed } = spyOnLogs();
      const answer = await withClient(ctx.databaseUrl, async (locker) => {
        // The class list waits for a lock held longer than a statement may run.
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE classes IN ACCESS EXCLUSIVE MODE');
        const timedOut = await get(ctx, '/classes', owner);
        await locker.query('ROLLBACK');
        return timedOut;
      });

      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR' });
      expect(answer.headers['retry-after']).toBeUndefined();
      expect(failed).toHaveBeenCalledTimes(1);
      const [fields, message] = failed.mock.calls[0] as [{ statement?: string; requestId?: string }, string];
      expect(message).toBe('Statement timed out');
      expect(fields.statement).toMatch(/\bclasses\b/);
      expect(fields.requestId).toEqual(expect.any(String));
      expect(loggedBy(warned, 'Database')).toHaveLength(0);
      await get(ctx, '/classes', owner).expect(200);
    } finally {
      await ctx.close();
    }
  });
});

describe('a silent network, with the default timeouts', () => {
  let app: RelayedApp;
  beforeAll(async () => {
    app = await startRelayedApp({});
  });
  afterAll(() => app.close());

  it('lets the token-user cache trust no revoked token within 3 s of its listener going silent', async () => {
    const { ctx, relay } = app;
    const user = await createUser(ctx);
    await get(ctx, '/users/me', user).expect(200);
    const [listener] = await ctx.db.query(
      `SELECT client_port FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
      [AUTH_USER_LISTENER_NAME],
    );
    relay.blackholeUpstreamPort(listener.client_port);
    // Its notification is sent into the silence: only the heartbeat can tell the cache.
    await ctx.db.query(`UPDATE users SET token_version = token_version + 1 WHERE id = $1`, [user.id]);
    const revoked = Date.now();
    await waitFor('the token to be refused', async () => (await get(ctx, '/users/me', user)).status === 401);
    expect(Date.now() - revoked).toBeLessThan(3_000);
  });

  it('answers 503 within 6 s to requests on already-open pooled connections', async () => {
    const { ctx, relay } = app;
    const owner = await createUser(ctx);
    // Enough at once that the pool opens all its connections, which then all fall silent.
    await Promise.all(Array.from({ length: 10 }, () => get(ctx, '/classes', owner).expect(200)));
    relay.blackhole();
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const answer = await get(ctx, '/classes', owner);
        return { status: answer.status, body: answer.body as unknown, ms: Date.now() - started };
      }),
    );
    for (const answer of answers)
      expect(answer).toEqual({ status: 503, body: OUTAGE_ANSWER, ms: expect.any(Number) });
    expect(Math.max(...answers.map(({ ms }) => ms))).toBeLessThanOrEqual(6_000);
    relay.resume();
    await waitFor('a request to succeed', async () => (await get(ctx, '/classes', owner)).status === 200);
  });
});
