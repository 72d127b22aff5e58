import passport from 'passport';
import { AUTH_USER_LISTENER_NAME, AuthUserCache } from '../../src/auth/auth-user.cache';
import { JwtStrategy } from '../../src/auth/jwt.strategy';
import { runCommand } from '../../src/cli/commands';
import {
  apiError,
  MAIL_LINK,
  resetToken,
  useAppWithMailCapture,
  tokenFromMail,
  uniqueEmail,
} from '../utils/accounts';
import { createSharedDatabase, waitFor } from '../utils/notifications';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, newSession, TEST_PASSWORD, TestUser } from '../utils/users';

/** A change made elsewhere reaches an instance's cache through a notification: this long at most. */
const NOTIFICATION_WAIT_MS = 2_000;

const cacheOf = (instance: TestApp): AuthUserCache => instance.app.get(AuthUserCache);
const bearer = (token: string) => ({ auth: `Bearer ${token}` });
const getMe = (instance: TestApp, user: { auth: string }) =>
  instance.http.get('/users/me').set('Authorization', user.auth);
const revokeBySql = (instance: TestApp, user: TestUser) =>
  instance.db.query(`UPDATE users SET token_version = token_version + 1 WHERE id = $1`, [user.id]);

/** Authenticates `user` on `instance` and checks that the instance now has the user cached. */
async function cacheOn(instance: TestApp, user: TestUser): Promise<void> {
  await getMe(instance, user).expect(200);
  expect(cacheOf(instance).get(user.id)).toBeDefined();
}

/** Polls until `user`'s token answers 401 on `instance`. */
const refusedWithin = (instance: TestApp, user: { auth: string }, timeoutMs = NOTIFICATION_WAIT_MS) =>
  waitFor('the token to be refused', async () => (await getMe(instance, user)).status === 401, timeoutMs);

describe('token-user cache: one instance', () => {
  const { ctx, smtp } = useAppWithMailCapture();

  describe('its own writes, even with the notifications switched off', () => {
    // Only the eviction after the commit can make these pass: the notification would usually win the race.
    const setNotifyTrigger = (state: 'ENABLE' | 'DISABLE') =>
      ctx.db.query(`ALTER TABLE users ${state} TRIGGER users_auth_changed_update`);
    beforeAll(() => setNotifyTrigger('DISABLE'));
    afterAll(() => setNotifyTrigger('ENABLE'));

    it('a password change refuses the cached token of another session on the very next request', async () => {
      const user = await createUser(ctx);
      const otherSession = await newSession(ctx, user);
      await cacheOn(ctx, otherSession);
      const change = await ctx.http
        .patch('/users/me/password')
        .set('Authorization', user.auth)
        .send({ currentPassword: TEST_PASSWORD, newPassword: 'a changed password' })
        .expect(200);
      const old = await getMe(ctx, otherSession);
      expect(old.status).toBe(401);
      expect(old.body).toEqual(apiError('UNAUTHORIZED'));
      await getMe(ctx, bearer(change.body.token)).expect(200);
      await getMe(ctx, user).expect(200);
    });

    it('a password reset refuses the cached old token on the very next request', async () => {
      const user = await createUser(ctx);
      await cacheOn(ctx, user);
      const token = await resetToken(ctx, smtp, user.email);
      const reset = await ctx.http
        .post('/auth/reset-password')
        .send({ token, password: 'a reset password' })
        .expect(200);
      await getMe(ctx, user).expect(401);
      await getMe(ctx, bearer(reset.body.token)).expect(200);
    });

    it('a time zone change shows on the very next request', async () => {
      const user = await createUser(ctx);
      const dueAt = async () => {
        const res = await ctx.http
          .post('/tasks/parse')
          .set('Authorization', user.auth)
          .send({ text: 'Lab report\nDue 2030-03-20 17:00' })
          .expect(200);
        return res.body.timeOptions[0].dueAt;
      };
      expect(await dueAt()).toBe('2030-03-20T17:00:00.000Z');
      await ctx.http
        .patch('/users/me')
        .set('Authorization', user.auth)
        .send({ timezone: 'Asia/Shanghai' })
        .expect(200);
      expect(await dueAt()).toBe('2030-03-20T09:00:00.000Z');
    });

    it('an e-mail change shows on the very next request', async () => {
      const user = await createUser(ctx);
      const newEmail = uniqueEmail('moved');
      const requestChange = (email: string) =>
        ctx.http.post('/users/me/email/change').set('Authorization', user.auth).send({ email });
      await requestChange(newEmail).expect(200);
      const token = tokenFromMail(ctx, await smtp.waitFor(newEmail), MAIL_LINK.emailChange);
      await ctx.http
        .post('/users/me/email/confirm')
        .set('Authorization', user.auth)
        .send({ token })
        .expect(200);
      // The cached user's address decides: the new one is now the account's own (400), not another's (409).
      const again = await requestChange(newEmail);
      expect(again.status).toBe(400);
      expect(again.body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });

  it('a deactivation by the operator CLI refuses the cached token', async () => {
    const user = await createUser(ctx);
    await cacheOn(ctx, user);
    // UsersService, as the CLI runs it, evicts nothing: only the notification tells this instance.
    await runCommand(ctx.app, ['users:deactivate', user.email]);
    await refusedWithin(ctx, user);
    await runCommand(ctx.app, ['users:activate', user.email]);
    await getMe(ctx, user).expect(401);
  });

  it('refuses tokens of a deleted user', async () => {
    const user = await createUser(ctx);
    await cacheOn(ctx, user);
    await ctx.db.transaction(async (manager) => {
      await manager.query(`DELETE FROM classes WHERE owner_id = $1`, [user.id]);
      await manager.query(`DELETE FROM users WHERE id = $1`, [user.id]);
    });
    await refusedWithin(ctx, user);
  });

  it('does not cache a row read before a commit whose notification came in meanwhile', async () => {
    const cache = cacheOf(ctx);
    const [target, sentinel] = [await createUser(ctx), await createUser(ctx)];
    await cacheOn(ctx, sentinel);
    const found = await cache.load(target.id, async () => {
      const [row] = await ctx.db.query(`SELECT email, timezone FROM users WHERE id = $1`, [target.id]);
      await revokeBySql(ctx, target);
      // Notifications come in commit order: once the sentinel's is handled, so is the target's.
      await ctx.db.query(`UPDATE users SET timezone = 'Europe/Paris' WHERE id = $1`, [sentinel.id]);
      await waitFor('the notifications', async () => !cache.get(sentinel.id), NOTIFICATION_WAIT_MS);
      return { tokenVersion: 0, keptToken: null, user: { id: target.id, ...row } };
    });
    expect(found?.tokenVersion).toBe(0);
    expect(cache.get(target.id)).toBeUndefined();
    await getMe(ctx, target).expect(401);
  });

  it('bypasses and empties the cache while its listener is down, and listens again', async () => {
    const cache = cacheOf(ctx);
    const user = await createUser(ctx);
    await cacheOn(ctx, user);
    const [terminated] = await ctx.db.query(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE application_name = $1 AND datname = current_database()`,
      [AUTH_USER_LISTENER_NAME],
    );
    expect(terminated.n).toBe(1);
    await waitFor('the cache to be emptied', async () => !cache.get(user.id), NOTIFICATION_WAIT_MS);

    // Down or back already: either way this revocation is seen at once.
    await revokeBySql(ctx, user);
    await getMe(ctx, user).expect(401);

    const again = await createUser(ctx);
    await waitFor('caching again', async () => {
      await getMe(ctx, again).expect(200);
      return cache.get(again.id);
    });
    await revokeBySql(ctx, again);
    await refusedWithin(ctx, again);
  });
});

describe('token-user cache: two instances on one database', () => {
  let database: { url: string; drop(): Promise<void> };
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    database = await createSharedDatabase();
    [first, second] = await Promise.all([
      createTestApp({}, { databaseUrl: database.url }),
      createTestApp({}, { databaseUrl: database.url }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
    await database.drop();
  });

  /**
   * Passport keeps one strategy per name for the whole process, the one of the last app built; in production
   * each instance is a process of its own. Requests to `instance` go through its own strategy and cache.
   */
  function on(instance: TestApp): TestApp {
    passport.use('jwt', instance.app.get(JwtStrategy));
    return instance;
  }

  it('a token cached on one instance is refused there once another instance revoked it', async () => {
    const user = await createUser(first);
    const otherSession = await newSession(on(second), user);
    await cacheOn(on(second), otherSession);
    const change = await on(first)
      .http.patch('/users/me/password')
      .set('Authorization', user.auth)
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'a changed password' })
      .expect(200);
    // The old token matches the cached row until the notification drops it.
    await refusedWithin(on(second), otherSession);
    await getMe(on(second), bearer(change.body.token)).expect(200);
    await getMe(on(second), user).expect(200);
  });

  it('a revocation by plain SQL reaches every instance', async () => {
    const user = await createUser(first);
    await cacheOn(on(first), user);
    await cacheOn(on(second), user);
    await revokeBySql(first, user);
    await refusedWithin(on(first), user);
    await refusedWithin(on(second), user);
  });
});

describe('token-user cache: AUTH_CACHE_TTL_MS=0', () => {
  it('caches nothing and opens no listener', async () => {
    const ctx = await createTestApp({ AUTH_CACHE_TTL_MS: '0' });
    try {
      const user = await createUser(ctx);
      await getMe(ctx, user).expect(200);
      expect(cacheOf(ctx).get(user.id)).toBeUndefined();
      const listeners = await ctx.db.query(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
        [AUTH_USER_LISTENER_NAME],
      );
      expect(listeners).toHaveLength(0);
      await revokeBySql(ctx, user);
      await getMe(ctx, user).expect(401);
    } finally {
      await ctx.close();
    }
  });
});
