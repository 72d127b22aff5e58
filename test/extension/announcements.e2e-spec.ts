import { randomBytes, randomUUID } from 'node:crypto';
import { setNotificationTypes } from '../../migrations/lib/notification-types';
import { ClassRole } from '../../src/access/class-roles';
import { encodeKeysetCursor } from '../../src/common/pagination/keyset';
import { DeliveryWorker } from '../../src/notifications/delivery/delivery-worker';
import { NotificationDispatcher } from '../../src/notifications/delivery/notification-dispatcher';
import { notificationTypeNames } from '../../src/notifications/production/notification-types';
import { addMember, ClassWithMembers, createClass, createClassWithMembers } from '../utils/classes';
import { apiError, ISO_TIMESTAMP } from '../utils/expect';
import {
  createSharedDatabase,
  deliveriesOf,
  DeliveryRow,
  IDLE_JOBS,
  inbox,
  setPref,
  useAppWithChannelFakes,
  waitFor,
} from '../utils/notifications';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { ANNOUNCEMENTS_PER_USER_PER_HOUR } from './announcements/announcements.controller';
import { ANNOUNCEMENTS } from './announcements/announcements.extension';
import { AnnouncementsRepository } from './announcements/announcements.repository';

/**
 * The example extension (test/extension/announcements/), mounted by `createTestApp(env, { extensions })`
 * beside the core modules and migrated at the app's start: its routes for every role, its validation, its
 * list's pages, safe retries, and its notification on every channel, once, and not after a deletion.
 */

const BOT_TOKEN = '123456:TEST-token';
const TYPE = 'ANNOUNCEMENT_POSTED';

const path = (classId: string, announcementId?: string): string =>
  `/classes/${classId}/announcements${announcementId ? `/${announcementId}` : ''}`;

interface Announcement {
  id: string;
  classId: string;
  title: string;
  body: string;
  author: { id: string; nickname: string | null };
  createdAt: string;
}

/** POST as `user`, asserting 201; answers the announcement. */
async function announce(
  ctx: TestApp,
  classId: string,
  user: TestUser,
  body: { title: string; body: string } = { title: 'Field trip', body: 'Bring boots.' },
): Promise<Announcement> {
  const res = await ctx.http.post(path(classId)).set('Authorization', user.auth).send(body);
  if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const rowsOf = async (ctx: TestApp, classId: string): Promise<number> =>
  (await ctx.db.query(`SELECT count(*)::int AS n FROM announcements WHERE class_id = $1`, [classId]))[0].n;

const notificationsOf = (ctx: TestApp, announcementId: string): Promise<{ user_id: string }[]> =>
  ctx.db.query(`SELECT user_id FROM notifications WHERE type = $1 AND subject_id = $2`, [
    TYPE,
    announcementId,
  ]);

describe('example extension: class announcements', () => {
  describe('routes', () => {
    // No job runs: notifications stay PENDING unless a test routes and sends them (`deliverNow`).
    const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes(
      () => ({ ...IDLE_JOBS, TELEGRAM_BOT_TOKEN: BOT_TOKEN }),
      { extensions: [ANNOUNCEMENTS] },
    );
    let room: ClassWithMembers;

    beforeAll(async () => {
      room = await createClassWithMembers(ctx, { name: 'Geography' });
    });

    const as = (role: 'owner' | 'admin' | 'member' | 'outsider'): TestUser => room[role];

    describe('access of every role', () => {
      it.each([
        ['OWNER', 'owner', 201],
        ['ADMIN', 'admin', 201],
        ['MEMBER', 'member', 403],
        ['a non-member', 'outsider', 403],
      ] as const)('POST as %s (%s) answers %d', async (_role, who, status) => {
        const before = await rowsOf(ctx, room.cls.id);
        const res = await ctx.http
          .post(path(room.cls.id))
          .set('Authorization', as(who).auth)
          .send({ title: '  Exam moved  ', body: ' To Friday. ' });
        expect(res.status).toBe(status);
        if (status === 201) {
          expect(res.body).toEqual({
            id: expect.any(String),
            classId: room.cls.id,
            title: 'Exam moved',
            body: 'To Friday.',
            author: { id: as(who).id, nickname: who === 'owner' ? 'Owner' : 'Admin' },
            createdAt: expect.stringMatching(ISO_TIMESTAMP),
          });
        } else {
          expect(res.body).toEqual(apiError('FORBIDDEN'));
        }
        expect(await rowsOf(ctx, room.cls.id)).toBe(before + (status === 201 ? 1 : 0));
      });

      it.each([
        ['OWNER', 'owner', 200],
        ['ADMIN', 'admin', 200],
        ['MEMBER', 'member', 200],
        ['a non-member', 'outsider', 403],
      ] as const)('GET as %s (%s) answers %d', async (_role, who, status) => {
        await announce(ctx, room.cls.id, room.owner);
        const res = await ctx.http.get(path(room.cls.id)).set('Authorization', as(who).auth);
        expect(res.status).toBe(status);
        if (status === 200) expect(res.body.announcements.length).toBeGreaterThan(0);
        else expect(res.body).toEqual(apiError('FORBIDDEN'));
      });

      it.each([
        ['OWNER', 'owner', 204],
        ['ADMIN', 'admin', 204],
        ['MEMBER', 'member', 403],
        ['a non-member', 'outsider', 403],
      ] as const)("DELETE of the owner's announcement as %s (%s) answers %d", async (_role, who, status) => {
        const { id } = await announce(ctx, room.cls.id, room.owner);
        const res = await ctx.http.delete(path(room.cls.id, id)).set('Authorization', as(who).auth);
        expect(res.status).toBe(status);
        if (status !== 204) expect(res.body).toEqual(apiError('FORBIDDEN'));
        const [row] = await ctx.db.query(`SELECT 1 FROM announcements WHERE id = $1`, [id]);
        expect(Boolean(row)).toBe(status !== 204);
      });

      it('lets an author who is a MEMBER now delete their own announcement, and no other MEMBER', async () => {
        const { cls, admin, member } = await createClassWithMembers(ctx);
        const { id } = await announce(ctx, cls.id, admin);
        await ctx.db.query(`UPDATE class_members SET role = 'MEMBER' WHERE class_id = $1 AND user_id = $2`, [
          cls.id,
          admin.id,
        ]);
        await ctx.http.delete(path(cls.id, id)).set('Authorization', member.auth).expect(403);
        await ctx.http.delete(path(cls.id, id)).set('Authorization', admin.auth).expect(204);
        const again = await ctx.http.delete(path(cls.id, id)).set('Authorization', admin.auth);
        expect([again.status, again.body]).toEqual([404, apiError('NOT_FOUND')]);
      });

      it('answers 401 to an anonymous caller on every route', async () => {
        const { id } = await announce(ctx, room.cls.id, room.owner);
        for (const res of [
          await ctx.http.post(path(room.cls.id)).send({ title: 'T', body: 'B' }),
          await ctx.http.get(path(room.cls.id)),
          await ctx.http.delete(path(room.cls.id, id)),
        ]) {
          expect([res.status, res.body]).toEqual([401, apiError('UNAUTHORIZED')]);
        }
        expect(await ctx.db.query(`SELECT 1 FROM announcements WHERE id = $1`, [id])).toHaveLength(1);
      });

      it('answers 404 for an announcement of another class, and for a class that does not exist', async () => {
        const other = await createClass(ctx, room.owner, { name: 'History' });
        const elsewhere = await announce(ctx, other.id, room.owner);
        const res = await ctx.http
          .delete(path(room.cls.id, elsewhere.id))
          .set('Authorization', room.owner.auth);
        expect([res.status, res.body]).toEqual([404, apiError('NOT_FOUND')]);
        expect(await rowsOf(ctx, other.id)).toBe(1);
        const unknown = await ctx.http.get(path(randomUUID())).set('Authorization', room.owner.auth);
        expect([unknown.status, unknown.body]).toEqual([404, apiError('NOT_FOUND')]);
      });
    });

    describe('validation', () => {
      // A class of its own: refused POSTs count towards the owner's limit too (the throttle runs first).
      let cls: { id: string };
      let owner: TestUser;
      beforeAll(async () => {
        ({ cls, owner } = await createClassWithMembers(ctx));
      });

      it.each([
        ['an empty title', { title: '', body: 'B' }],
        ['a title of white space', { title: '   ', body: 'B' }],
        ['a title over 200 characters', { title: 'x'.repeat(201), body: 'B' }],
        ['no body', { title: 'T' }],
        ['a body of white space', { title: 'T', body: '\n\t ' }],
        ['a body over 10,000 characters', { title: 'T', body: 'x'.repeat(10_001) }],
        ['a title that is not text', { title: 42, body: 'B' }],
        ['an unknown field', { title: 'T', body: 'B', pinned: true }],
      ])('refuses %s with 400', async (_what, body) => {
        const res = await ctx.http.post(path(cls.id)).set('Authorization', owner.auth).send(body);
        expect([res.status, res.body]).toEqual([400, apiError('VALIDATION_ERROR')]);
        expect(await rowsOf(ctx, cls.id)).toBe(0);
      });

      it('accepts a title of 200 and a body of 10,000 characters', async () => {
        await announce(ctx, cls.id, owner, { title: 'x'.repeat(200), body: 'y'.repeat(10_000) });
      });

      it.each([
        ['limit', '0'],
        ['limit', '101'],
        ['limit', 'ten'],
        ['cursor', '!!'],
        ['cursor', Buffer.from('not a place').toString('base64url')],
      ])('refuses the query %s=%s with 400', async (name, value) => {
        const res = await ctx.http
          .get(path(cls.id))
          .query({ [name]: value })
          .set('Authorization', owner.auth);
        expect([res.status, res.body]).toEqual([400, apiError('VALIDATION_ERROR')]);
      });

      it('refuses ids that are not UUIDs with 400', async () => {
        for (const url of [path('nope', randomUUID()), path(cls.id, 'nope')]) {
          const res = await ctx.http.delete(url).set('Authorization', owner.auth);
          expect([url, res.status, res.body]).toEqual([url, 400, apiError('VALIDATION_ERROR')]);
        }
      });
    });

    describe('the list', () => {
      /** The class's announcements as the list orders them (two may share a millisecond). */
      const newestFirstIds = async (classId: string): Promise<string[]> =>
        (
          await ctx.db.query(
            `SELECT id FROM announcements WHERE class_id = $1 ORDER BY created_at DESC, id DESC`,
            [classId],
          )
        ).map((row: { id: string }) => row.id);

      it('pages newest first with the keyset cursor, to a last page without one', async () => {
        const { cls, owner, member } = await createClassWithMembers(ctx);
        for (let i = 1; i <= 5; i += 1)
          await announce(ctx, cls.id, owner, { title: `Notice ${i}`, body: 'B' });
        const newestFirst = await newestFirstIds(cls.id);
        const pages: string[][] = [];
        let cursor: string | null = null;
        do {
          const res: { body: { announcements: Announcement[]; nextCursor: string | null } } = await ctx.http
            .get(path(cls.id))
            .query(cursor ? { limit: 2, cursor } : { limit: 2 })
            .set('Authorization', member.auth)
            .expect(200);
          pages.push(res.body.announcements.map((a) => a.id));
          cursor = res.body.nextCursor;
        } while (cursor);
        expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
      });

      it('goes on from a place whose announcement was deleted; past the last row, an empty last page', async () => {
        const { cls, owner, member } = await createClassWithMembers(ctx);
        for (let i = 0; i < 3; i += 1) await announce(ctx, cls.id, owner);
        const [newest, ...older] = await newestFirstIds(cls.id);
        const first = await ctx.http
          .get(path(cls.id))
          .query({ limit: 1 })
          .set('Authorization', member.auth)
          .expect(200);
        expect(first.body.announcements.map((a: Announcement) => a.id)).toEqual([newest]);
        await ctx.http.delete(path(cls.id, newest)).set('Authorization', owner.auth).expect(204);
        const next = await ctx.http
          .get(path(cls.id))
          .query({ cursor: first.body.nextCursor })
          .set('Authorization', member.auth)
          .expect(200);
        expect(next.body.announcements.map((a: Announcement) => a.id)).toEqual(older);
        // A cursor names a place, not a row: one after every row answers an empty last page.
        const past = encodeKeysetCursor({ micros: '1', id: randomUUID() });
        const empty = await ctx.http
          .get(path(cls.id))
          .query({ cursor: past })
          .set('Authorization', member.auth)
          .expect(200);
        expect(empty.body).toEqual({ announcements: [], nextCursor: null });
      });

      it('answers at most 20 by default and 100 at most', async () => {
        const { cls, owner } = await createClassWithMembers(ctx);
        await ctx.db.query(
          `INSERT INTO announcements (class_id, author_id, title, body)
           SELECT $1, $2, 'Seeded ' || i, 'B' FROM generate_series(1, 101) i`,
          [cls.id, owner.id],
        );
        const byDefault = await ctx.http.get(path(cls.id)).set('Authorization', owner.auth).expect(200);
        expect(byDefault.body.announcements).toHaveLength(20);
        const most = await ctx.http
          .get(path(cls.id))
          .query({ limit: 100 })
          .set('Authorization', owner.auth)
          .expect(200);
        expect(most.body.announcements).toHaveLength(100);
        expect(most.body.nextCursor).toEqual(expect.any(String));
      });
    });

    describe('safe retries and limits', () => {
      it('answers a repeated Idempotency-Key with the first answer, one row and one set of notifications', async () => {
        const { cls, owner } = await createClassWithMembers(ctx);
        const key = `announce-${randomBytes(4).toString('hex')}`;
        const send = (body: object) =>
          ctx.http.post(path(cls.id)).set('Authorization', owner.auth).set('Idempotency-Key', key).send(body);
        const first = await send({ title: 'Once', body: 'Only once.' }).expect(201);
        const repeat = await send({ title: 'Once', body: 'Only once.' }).expect(201);
        expect(repeat.body).toEqual(first.body);
        expect(repeat.headers['idempotent-replayed']).toBe('true');
        expect(await rowsOf(ctx, cls.id)).toBe(1);
        expect(await notificationsOf(ctx, first.body.id)).toHaveLength(2);
        const reused = await send({ title: 'Other', body: 'Another request.' });
        expect([reused.status, reused.body]).toEqual([422, apiError('IDEMPOTENCY_KEY_REUSED')]);
        expect(await rowsOf(ctx, cls.id)).toBe(1);
      });

      it(`limits an account to ${ANNOUNCEMENTS_PER_USER_PER_HOUR} announcements an hour`, async () => {
        const owner = await createUser(ctx);
        const cls = await createClass(ctx, owner);
        for (let i = 0; i < ANNOUNCEMENTS_PER_USER_PER_HOUR; i += 1) await announce(ctx, cls.id, owner);
        const res = await ctx.http
          .post(path(cls.id))
          .set('Authorization', owner.auth)
          .send({ title: 'T', body: 'B' });
        expect([res.status, res.body]).toEqual([429, apiError('RATE_LIMITED')]);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        expect(await rowsOf(ctx, cls.id)).toBe(ANNOUNCEMENTS_PER_USER_PER_HOUR);
        // Per account: another manager of the class still announces.
        const admin = await createUser(ctx);
        await addMember(ctx, cls.id, admin, ClassRole.ADMIN);
        await announce(ctx, cls.id, admin);
      });
    });

    describe('the notification type', () => {
      it('is in the registry, the database check and the OpenAPI enum alike', async () => {
        expect(notificationTypeNames()).toContain(TYPE);
        const [{ definition }] = await ctx.db.query(
          `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
            WHERE conrelid = 'notifications'::regclass AND conname = 'notifications_type_check'`,
        );
        const allowed = [...(definition as string).matchAll(/'([A-Z0-9_]+)'/g)].map((match) => match[1]);
        expect(allowed.sort()).toEqual(notificationTypeNames().sort());
        const { components } = (await ctx.http.get('/openapi.json').expect(200)).body;
        expect(components.schemas.NotificationType.enum).toContain(TYPE);
      });

      it('cannot be inserted without the migration that adds it to the database check', async () => {
        const { cls, owner } = await createClassWithMembers(ctx);
        const { id } = await announce(ctx, cls.id, owner);
        const repository = ctx.app.get(AnnouncementsRepository);
        const runner = ctx.db.createQueryRunner();
        await runner.startTransaction();
        try {
          // Rows of the type would fail the narrower check as it is added; the whole change is rolled back.
          await runner.query(`DELETE FROM notifications WHERE type = $1`, [TYPE]);
          await setNotificationTypes(runner, (types) => types.filter((type) => type !== TYPE));
          await expect(repository.notifyPosted(runner.manager, id)).rejects.toThrow(
            /notifications_type_check/,
          );
        } finally {
          await runner.rollbackTransaction();
          await runner.release();
        }
      });

      it('notifies every member but the author, once however often it is produced', async () => {
        const { cls, owner, admin, member, outsider } = await createClassWithMembers(ctx);
        const { id } = await announce(ctx, cls.id, admin);
        const recipients = async () => (await notificationsOf(ctx, id)).map((row) => row.user_id).sort();
        expect(await recipients()).toEqual([owner.id, member.id].sort());
        expect(await ctx.app.get(AnnouncementsRepository).notifyPosted(ctx.db, id)).toBe(0);
        expect(await recipients()).toEqual([owner.id, member.id].sort());
        expect(await recipients()).not.toContain(outsider.id);
      });
    });

    describe('deleted before it is sent', () => {
      /** One routing and delivery run of the notification jobs, which this app does not schedule. */
      async function deliverNow(users: TestUser[]): Promise<DeliveryRow[]> {
        await ctx.app.get(NotificationDispatcher).dispatchPending();
        ctx.app.get(DeliveryWorker).wake();
        return waitFor('deliveries finished', async () => {
          const all = (await Promise.all(users.map((user) => deliveriesOf(ctx, user)))).flat();
          return all.length > 0 && all.every((row) => row.status !== 'PENDING') && all;
        });
      }

      it('is not sent on any channel, while an announcement still there is', async () => {
        const { cls, owner, member } = await createClassWithMembers(ctx);
        const hook = `/hook-${randomBytes(4).toString('hex')}`;
        const pref = await setPref(ctx, member, { channel: 'WEBHOOK', address: receiver.url(hook) });
        receiver.setSecret(hook, pref.secret!);
        const chat = `-100${randomBytes(3).readUIntBE(0, 3)}`;
        await setPref(ctx, member, { channel: 'MESSENGER', address: chat });

        const deleted = await announce(ctx, cls.id, owner, { title: 'Withdrawn', body: 'Never mind.' });
        await ctx.http.delete(path(cls.id, deleted.id)).set('Authorization', owner.auth).expect(204);
        const skipped = await deliverNow([member]);
        expect(skipped.map((row) => [row.channel, row.status, row.last_error]).sort()).toEqual([
          ['EMAIL', 'SKIPPED', 'not sent: the announcement was deleted'],
          ['MESSENGER', 'SKIPPED', 'not sent: the announcement was deleted'],
          ['WEBHOOK', 'SKIPPED', 'not sent: the announcement was deleted'],
        ]);

        const kept = await announce(ctx, cls.id, owner, { title: 'Kept', body: 'Still on.' });
        const sent = await deliverNow([member]);
        expect(
          sent
            .filter((row) => row.status === 'SENT')
            .map((row) => row.channel)
            .sort(),
        ).toEqual(['EMAIL', 'MESSENGER', 'WEBHOOK']);
        expect(
          smtp.messages.filter((mail) => mail.to.includes(member.email)).map((mail) => mail.subject),
        ).toEqual([`Announcement in Test class: ${kept.title}`]);
        expect(telegram.messages.filter((message) => message.chatId === chat)).toHaveLength(1);
        expect(receiver.received.filter((hit) => hit.path === hook).map((hit) => hit.body)).toEqual([
          expect.objectContaining({ data: expect.objectContaining({ announcementId: kept.id }) }),
        ]);
      });
    });
  });

  describe('the notification on every channel', () => {
    const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes(
      () => ({ TELEGRAM_BOT_TOKEN: BOT_TOKEN }),
      {
        extensions: [ANNOUNCEMENTS],
      },
    );

    it('reaches the inbox, e-mail, webhook and messenger of every member but the author, once', async () => {
      const { cls, owner, admin, member } = await createClassWithMembers(ctx, { name: 'Chemistry' });
      const hook = `/hook-${randomBytes(4).toString('hex')}`;
      const pref = await setPref(ctx, member, { channel: 'WEBHOOK', address: receiver.url(hook) });
      receiver.setSecret(hook, pref.secret!);
      const chat = `-100${randomBytes(3).readUIntBE(0, 3)}`;
      await setPref(ctx, member, { channel: 'MESSENGER', address: chat });

      const posted = await announce(ctx, cls.id, owner, {
        title: 'Lab closed',
        body: 'The lab is closed\n\ton Monday.',
      });
      // Produced again, as a retried fan-out would be: nothing more.
      expect(await ctx.app.get(AnnouncementsRepository).notifyPosted(ctx.db, posted.id)).toBe(0);

      const sent = await waitFor('every channel sent', async () => {
        const rows = await deliveriesOf(ctx, member);
        return rows.length === 3 && rows.every((row) => row.status === 'SENT') && rows;
      });
      expect(sent.map((row) => row.channel).sort()).toEqual(['EMAIL', 'MESSENGER', 'WEBHOOK']);
      const items = (await inbox(ctx, member)).items as unknown as Record<string, string | null>[];
      expect(items).toEqual([
        {
          id: expect.any(String),
          type: TYPE,
          taskId: null,
          taskTitle: null,
          classId: cls.id,
          className: 'Chemistry',
          title: 'Announcement in Chemistry: Lab closed',
          content: 'Owner announced in Chemistry: The lab is closed on Monday.',
          readAt: null,
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
        },
      ]);
      const [item] = items;

      const mails = smtp.messages.filter((mail) => mail.to.includes(member.email));
      expect(mails.map((mail) => mail.subject)).toEqual([item.title]);
      expect(mails[0].text).toContain(item.content);
      const hits = receiver.received.filter((hit) => hit.path === hook);
      expect(hits.map((hit) => [hit.verified, hit.body])).toEqual([
        [
          true,
          {
            id: item.id,
            type: TYPE,
            createdAt: item.createdAt,
            data: { classId: cls.id, className: 'Chemistry', announcementId: posted.id, title: 'Lab closed' },
          },
        ],
      ]);
      expect(telegram.messages.filter((message) => message.chatId === chat).map((m) => m.text)).toEqual([
        `${item.title}\n\n${item.content}`,
      ]);

      // The ADMIN too, by the e-mail of the account; the author on no channel.
      await smtp.waitFor(admin.email);
      expect((await inbox(ctx, admin)).items.map((notification) => notification.type)).toEqual([TYPE]);
      expect(await notificationsOf(ctx, posted.id)).toHaveLength(2);
      expect((await inbox(ctx, owner)).items).toEqual([]);
      expect(await deliveriesOf(ctx, owner)).toEqual([]);
      expect(smtp.messages.filter((mail) => mail.to.includes(owner.email))).toEqual([]);
    });
  });

  it('is migrated once by instances starting together on one database, under the migration lock', async () => {
    const database = await createSharedDatabase();
    const instances: TestApp[] = [];
    try {
      const started = await Promise.allSettled(
        [0, 1].map(() =>
          createTestApp(IDLE_JOBS, { databaseUrl: database.url, extensions: [ANNOUNCEMENTS] }),
        ),
      );
      for (const result of started) if (result.status === 'fulfilled') instances.push(result.value);
      expect(started.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
      const applied = await instances[0].db.query(
        `SELECT name FROM migrations WHERE name LIKE 'Announcements%'`,
      );
      expect(applied).toEqual([{ name: 'Announcements1764005000000' }]);
      const owner = await createUser(instances[0]);
      const cls = await createClass(instances[0], owner);
      const posted = await announce(instances[0], cls.id, owner);
      const listed = await instances[1].http.get(path(cls.id)).set('Authorization', owner.auth).expect(200);
      expect(listed.body.announcements).toEqual([posted]);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
      await database.drop();
    }
  });
});
