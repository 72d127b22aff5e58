import { randomUUID } from 'node:crypto';
import { createClass } from '../utils/classes';
import { UUID_PATTERN } from '../utils/expect';
import { IDLE_JOBS, inbox, setPref } from '../utils/notifications';
import { createDraft } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

const VALIDATION = { error: expect.any(String), code: 'VALIDATION_ERROR' };
const NOT_FOUND = { error: expect.any(String), code: 'NOT_FOUND' };
const UNAUTHORIZED = { error: expect.any(String), code: 'UNAUTHORIZED' };
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('notifications: preferences and inbox', () => {
  // The jobs stay idle here: rows this file sets PENDING must not be dispatched under its feet.
  const ctx = useTestApp(IDLE_JOBS);

  /**
   * SENT notifications for `user` about a draft (so the jobs add none of their own), created
   * `count` seconds apart, newest last; answers their ids newest first, as the inbox orders them.
   */
  async function seedInbox(
    user: TestUser,
    count: number,
    fields: { read?: boolean; sameTime?: boolean } = {},
  ) {
    const cls = await createClass(ctx, user, { name: 'Seeded class' });
    const task = await createDraft(ctx, cls.id, user, { title: 'Seeded task' });
    const rows: { id: string }[] = await ctx.db.query(
      `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, hours_before, due_at,
                                  title, content, status, read_at, created_at)
       SELECT $1, 'TASK_DUE_REMINDER', $2, $3, 'Seeded task', 'Seeded class', g, now() + interval '1 day',
              'Title ' || g, 'Content ' || g, 'SENT',
              CASE WHEN $5 THEN now() END,
              CASE WHEN $6 THEN now() - interval '1 hour' ELSE now() - interval '1 hour' + g * interval '1 second' END
         FROM generate_series(1, $4) g
       RETURNING id`,
      [user.id, task.id, cls.id, count, fields.read ?? false, fields.sameTime ?? false],
    );
    const ordered: { id: string }[] = await ctx.db.query(
      `SELECT id FROM notifications WHERE id = ANY($1) ORDER BY created_at DESC, id DESC`,
      [rows.map((row) => row.id)],
    );
    return ordered.map((row) => row.id);
  }

  /** All pages of the inbox with `query`, following nextCursor. */
  async function allPages(user: TestUser, query: Record<string, string | number | boolean>) {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = await inbox(ctx, user, cursor ? { ...query, cursor } : query);
      pages.push(page.items.map((item) => item.id));
      cursor = page.nextCursor;
      if (cursor) expect(cursor).toBe(page.items[page.items.length - 1].id);
    } while (cursor);
    return pages;
  }

  describe('authentication', () => {
    it.each([
      ['get', '/users/me/notifications'],
      ['get', '/users/me/notifications/unread-count'],
      ['patch', `/users/me/notifications/${randomUUID()}/read`],
      ['post', '/users/me/notifications/read-all'],
      ['get', '/users/me/notification-prefs'],
      ['put', '/users/me/notification-prefs'],
    ] as const)('%s %s without a token answers 401', async (method, path) => {
      const res = await ctx.http[method](path);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });

  describe('preferences', () => {
    /** What GET lists before anything was saved: EMAIL to the account's address, enabled (as delivery does). */
    const unsavedEmailPref = (user: TestUser) => ({
      id: expect.stringMatching(UUID_PATTERN),
      channel: 'EMAIL',
      address: user.email,
      isEnabled: true,
    });
    const listPrefs = async (user: TestUser) =>
      (await ctx.http.get('/users/me/notification-prefs').set('Authorization', user.auth).expect(200)).body;

    it('starts with the unsaved EMAIL preference only', async () => {
      const user = await createUser(ctx);
      expect(await listPrefs(user)).toEqual([unsavedEmailPref(user)]);
    });

    it('creates an EMAIL preference (address normalized, enabled by default, no secret)', async () => {
      const user = await createUser(ctx);
      const res = await ctx.http
        .put('/users/me/notification-prefs')
        .set('Authorization', user.auth)
        .send({ channel: 'EMAIL', address: '  Ada@Example.COM ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.any(String),
        channel: 'EMAIL',
        address: 'ada@example.com',
        isEnabled: true,
      });
    });

    it('creates a WEBHOOK preference with a secret that updates keep', async () => {
      const user = await createUser(ctx);
      const created = await setPref(ctx, user, {
        channel: 'WEBHOOK',
        address: 'https://hooks.example.com/a',
      });
      expect(created).toEqual({
        id: expect.any(String),
        channel: 'WEBHOOK',
        address: 'https://hooks.example.com/a',
        isEnabled: true,
        secret: expect.stringMatching(WEBHOOK_SECRET),
      });
      expect(Buffer.from(created.secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);

      const updated = await setPref(ctx, user, {
        channel: 'WEBHOOK',
        address: 'http://hooks.example.com/b',
        isEnabled: false,
      });
      expect(updated).toEqual({ ...created, address: 'http://hooks.example.com/b', isEnabled: false });

      const other = await createUser(ctx);
      const othersHook = await setPref(ctx, other, {
        channel: 'WEBHOOK',
        address: 'https://hooks.example.com/a',
      });
      expect(othersHook.secret).not.toBe(created.secret);
    });

    it('upserts one record per channel; isEnabled defaults to true on update too', async () => {
      const user = await createUser(ctx);
      const messenger = await setPref(ctx, user, {
        channel: 'MESSENGER',
        address: '-100123456',
        isEnabled: false,
      });
      const email = await setPref(ctx, user, { channel: 'EMAIL', address: 'first@example.com' });
      const again = await setPref(ctx, user, {
        channel: 'EMAIL',
        address: 'second@example.com',
        isEnabled: false,
      });
      expect(again).toEqual({
        id: email.id,
        channel: 'EMAIL',
        address: 'second@example.com',
        isEnabled: false,
      });
      const reenabled = await setPref(ctx, user, { channel: 'MESSENGER', address: '@class_bot_chat' });
      expect(reenabled).toEqual({
        id: messenger.id,
        channel: 'MESSENGER',
        address: '@class_bot_chat',
        isEnabled: true,
      });
      const hook = await setPref(ctx, user, { channel: 'WEBHOOK', address: 'http://127.0.0.1:9/hook' });

      const list = await ctx.http
        .get('/users/me/notification-prefs')
        .set('Authorization', user.auth)
        .expect(200);
      expect(list.body).toEqual([
        { id: email.id, channel: 'EMAIL', address: 'second@example.com', isEnabled: false },
        {
          id: hook.id,
          channel: 'WEBHOOK',
          address: 'http://127.0.0.1:9/hook',
          isEnabled: true,
          secret: hook.secret,
        },
        { id: messenger.id, channel: 'MESSENGER', address: '@class_bot_chat', isEnabled: true },
      ]);
      const [{ count }] = await ctx.db.query(
        `SELECT count(*)::int AS count FROM notification_prefs WHERE user_id = $1`,
        [user.id],
      );
      expect(count).toBe(3);
    });

    it("lists only the caller's preferences", async () => {
      const owner = await createUser(ctx);
      await setPref(ctx, owner, { channel: 'WEBHOOK', address: 'https://hooks.example.com/mine' });
      const other = await createUser(ctx);
      expect(await listPrefs(other)).toEqual([unsavedEmailPref(other)]);
    });

    it('keeps the record when two upserts of one channel race', async () => {
      const user = await createUser(ctx);
      const results = await Promise.all(
        ['a', 'b', 'c', 'd'].map((suffix) =>
          setPref(ctx, user, { channel: 'WEBHOOK', address: `https://hooks.example.com/${suffix}` }),
        ),
      );
      expect(new Set(results.map((pref) => pref.id)).size).toBe(1);
      expect(new Set(results.map((pref) => pref.secret)).size).toBe(1);
    });

    it.each([
      [{ channel: 'EMAIL', address: 'not-an-email' }],
      [{ channel: 'EMAIL', address: 'https://example.com' }],
      [{ channel: 'EMAIL', address: '' }],
      [{ channel: 'WEBHOOK', address: 'ftp://example.com/hook' }],
      [{ channel: 'WEBHOOK', address: 'javascript:alert(1)' }],
      [{ channel: 'WEBHOOK', address: 'example.com/hook' }],
      [{ channel: 'WEBHOOK', address: `https://example.com/${'a'.repeat(2048)}` }],
      // Pass the URL validator, but no HTTP client can parse them (invalid punycode, IPv6 zone id).
      [{ channel: 'WEBHOOK', address: 'https://xn--a.com/hook' }],
      [{ channel: 'WEBHOOK', address: 'http://[fe80::1%25eth0]/hook' }],
      [{ channel: 'MESSENGER', address: 'abc' }],
      [{ channel: 'MESSENGER', address: '12a' }],
      [{ channel: 'MESSENGER', address: '@' }],
      [{ channel: 'MESSENGER', address: '@bad name' }],
      [{ channel: 'SMS', address: '+15550100' }],
      [{ channel: 'EMAIL' }],
      [{ address: 'a@example.com' }],
      [{ channel: 'EMAIL', address: 42 }],
      [{ channel: 'EMAIL', address: 'a@example.com', isEnabled: 'yes' }],
      [{ channel: 'EMAIL', address: 'a@example.com', secret: 'whsec_mine' }],
    ])('rejects %j with 400', async (body) => {
      const user = await createUser(ctx);
      const res = await ctx.http
        .put('/users/me/notification-prefs')
        .set('Authorization', user.auth)
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(VALIDATION);
      expect(await listPrefs(user)).toEqual([unsavedEmailPref(user)]);
    });
  });

  describe('inbox', () => {
    it('starts empty', async () => {
      const user = await createUser(ctx);
      expect(await inbox(ctx, user)).toEqual({ items: [], nextCursor: null, unreadCount: 0 });
      await ctx.http
        .get('/users/me/notifications/unread-count')
        .set('Authorization', user.auth)
        .expect(200, { unreadCount: 0 });
    });

    it('answers every field of an item', async () => {
      const user = await createUser(ctx);
      const [id] = await seedInbox(user, 1);
      const [row] = await ctx.db.query(
        `SELECT task_id, class_id, created_at FROM notifications WHERE id = $1`,
        [id],
      );
      expect(await inbox(ctx, user)).toEqual({
        items: [
          {
            id,
            type: 'TASK_DUE_REMINDER',
            taskId: row.task_id,
            classId: row.class_id,
            taskTitle: 'Seeded task',
            className: 'Seeded class',
            title: 'Title 1',
            content: 'Content 1',
            readAt: null,
            createdAt: (row.created_at as Date).toISOString(),
          },
        ],
        nextCursor: null,
        unreadCount: 1,
      });
    });

    it('pages newest first with a keyset cursor; the last page has nextCursor null', async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(user, 5);
      expect(await allPages(user, { limit: 2 })).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
      expect(await allPages(user, { limit: 5 })).toEqual([ids]);
      const page = await inbox(ctx, user, { limit: 5 });
      expect(page.nextCursor).toBeNull();
      expect(page.unreadCount).toBe(5);
    });

    it('orders notifications created at the same moment by id, without gaps or repeats', async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(user, 7, { sameTime: true });
      expect((await allPages(user, { limit: 3 })).flat()).toEqual(ids);
    });

    it('answers 20 items by default and at most 50', async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(user, 55);
      const first = await inbox(ctx, user);
      expect(first.items.map((item) => item.id)).toEqual(ids.slice(0, 20));
      expect(first.nextCursor).toBe(ids[19]);
      const max = await inbox(ctx, user, { limit: 50 });
      expect(max.items).toHaveLength(50);
      const rest = await inbox(ctx, user, { limit: 50, cursor: max.nextCursor! });
      expect(rest.items.map((item) => item.id)).toEqual(ids.slice(50));
      expect(rest.nextCursor).toBeNull();
      const one = await inbox(ctx, user, { limit: 1 });
      expect(one.items.map((item) => item.id)).toEqual([ids[0]]);
      expect(one.nextCursor).toBe(ids[0]);
    });

    it.each([
      [{ limit: 0 }],
      [{ limit: 51 }],
      [{ limit: -1 }],
      [{ limit: 1.5 }],
      [{ limit: 'ten' }],
      [{ unreadOnly: 'yes' }],
      [{ cursor: 'not-a-uuid' }],
      [{ other: 1 }],
    ])('rejects the query %j with 400', async (query) => {
      const user = await createUser(ctx);
      const res = await ctx.http.get('/users/me/notifications').query(query).set('Authorization', user.auth);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(VALIDATION);
    });

    it('names what is wrong with a limit', async () => {
      const user = await createUser(ctx);
      for (const [limit, error] of [
        ['ten', 'limit must be an integer number'],
        ['1.5', 'limit must be an integer number'],
        ['0', 'limit must not be less than 1'],
        ['51', 'limit must not be greater than 50'],
      ]) {
        const res = await ctx.http
          .get('/users/me/notifications')
          .query({ limit })
          .set('Authorization', user.auth);
        expect(res.body).toEqual({ error, code: 'VALIDATION_ERROR' });
      }
    });

    it("rejects an unknown cursor, another user's notification and a PENDING one with 400", async () => {
      const user = await createUser(ctx);
      await seedInbox(user, 2);
      const other = await createUser(ctx);
      const [othersId] = await seedInbox(other, 1);
      const [pendingId] = await seedInbox(user, 1);
      await ctx.db.query(`UPDATE notifications SET status = 'PENDING' WHERE id = $1`, [pendingId]);
      for (const cursor of [randomUUID(), othersId, pendingId]) {
        const res = await ctx.http
          .get('/users/me/notifications')
          .query({ cursor })
          .set('Authorization', user.auth);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(VALIDATION);
      }
    });

    it('shows only SENT notifications of the caller, and counts only those', async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(user, 3);
      await ctx.db.query(`UPDATE notifications SET status = 'PENDING' WHERE id = $1`, [ids[1]]);
      const other = await createUser(ctx);
      await seedInbox(other, 2);
      const page = await inbox(ctx, user);
      expect(page.items.map((item) => item.id)).toEqual([ids[0], ids[2]]);
      expect(page.unreadCount).toBe(2);
    });

    it('filters unread notifications and pages through them', async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(user, 6);
      for (const id of [ids[0], ids[3]]) {
        await ctx.http
          .patch(`/users/me/notifications/${id}/read`)
          .set('Authorization', user.auth)
          .expect(200, { id });
      }
      const unread = [ids[1], ids[2], ids[4], ids[5]];
      expect(await allPages(user, { unreadOnly: true, limit: 3 })).toEqual([
        unread.slice(0, 3),
        unread.slice(3),
      ]);
      expect((await allPages(user, { unreadOnly: false, limit: 4 })).flat()).toEqual(ids);
      const page = await inbox(ctx, user, { unreadOnly: true });
      expect(page.unreadCount).toBe(4);
      // A cursor stays valid after its item was read.
      const next = await inbox(ctx, user, { unreadOnly: true, cursor: ids[0] });
      expect(next.items.map((item) => item.id)).toEqual(unread);
    });

    it('marks one notification read once; the second call changes nothing', async () => {
      const user = await createUser(ctx);
      const [id, otherId] = await seedInbox(user, 2);
      await ctx.http
        .patch(`/users/me/notifications/${id}/read`)
        .set('Authorization', user.auth)
        .expect(200, { id });
      const first = (await inbox(ctx, user)).items.find((item) => item.id === id)!;
      expect(first.readAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await ctx.http
        .patch(`/users/me/notifications/${id}/read`)
        .set('Authorization', user.auth)
        .expect(200, { id });
      const page = await inbox(ctx, user);
      expect(page.items.find((item) => item.id === id)!.readAt).toBe(first.readAt);
      expect(page.items.find((item) => item.id === otherId)!.readAt).toBeNull();
      expect(page.unreadCount).toBe(1);
      await ctx.http
        .get('/users/me/notifications/unread-count')
        .set('Authorization', user.auth)
        .expect(200, { unreadCount: 1 });
    });

    it("answers 404 for another user's, an unknown or a PENDING notification, 400 for a malformed id", async () => {
      const user = await createUser(ctx);
      const other = await createUser(ctx);
      const [othersId] = await seedInbox(other, 1);
      const [pendingId] = await seedInbox(user, 1);
      await ctx.db.query(`UPDATE notifications SET status = 'PENDING' WHERE id = $1`, [pendingId]);
      for (const id of [othersId, randomUUID(), pendingId]) {
        const res = await ctx.http
          .patch(`/users/me/notifications/${id}/read`)
          .set('Authorization', user.auth);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      expect((await inbox(ctx, other)).items[0].readAt).toBeNull();
      const bad = await ctx.http.patch('/users/me/notifications/nope/read').set('Authorization', user.auth);
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual(VALIDATION);
    });

    it("marks all of the caller's notifications read and answers how many changed", async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(user, 4);
      await ctx.http
        .patch(`/users/me/notifications/${ids[2]}/read`)
        .set('Authorization', user.auth)
        .expect(200);
      const other = await createUser(ctx);
      await seedInbox(other, 2);
      await ctx.http
        .post('/users/me/notifications/read-all')
        .set('Authorization', user.auth)
        .expect(200, { updated: 3 });
      await ctx.http
        .post('/users/me/notifications/read-all')
        .set('Authorization', user.auth)
        .expect(200, { updated: 0 });
      const page = await inbox(ctx, user);
      expect(page.unreadCount).toBe(0);
      expect(page.items.every((item) => item.readAt !== null)).toBe(true);
      expect((await inbox(ctx, user, { unreadOnly: true })).items).toEqual([]);
      expect((await inbox(ctx, other)).unreadCount).toBe(2);
    });
  });
});
