import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DeliveryOutbox } from '../../src/notifications/delivery/delivery-outbox';
import { DeliveryRetention } from '../../src/notifications/delivery/delivery-retention';
import { addMember, createClass } from '../utils/classes';
import { apiError, ISO_TIMESTAMP, UUID_PATTERN } from '../utils/expect';
import { DeliveryJson, setPref, useAppWithChannelFakes, waitFor } from '../utils/notifications';
import { createTask } from '../utils/tasks';
import { createUser, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';
import { ReceivedWebhook } from '../fakes/webhook-receiver';

const BOT_TOKEN = '123456:TEST-bot-token_secret';
const SMTP_PASSWORD = 'smtp-S3cret-pass';

type Delivery = DeliveryJson;

interface DeliveryPage {
  items: Delivery[];
  nextCursor: string | null;
}

describe('notifications: delivery log, test events and redelivery', () => {
  const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes((fakes) => ({
    // The fake announces no AUTH, so the credentials are never sent; they are in the configuration all the same.
    SMTP_URL: fakes.smtp.url.replace('smtp://', `smtp://mailer:${SMTP_PASSWORD}@`),
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    DELIVERY_MAX_ATTEMPTS: '1',
    DELIVERY_RETENTION_DAYS: '7',
  }));

  const list = (user: TestUser, query: Record<string, string | number> = {}) =>
    ctx.http.get('/users/me/deliveries').query(query).set('Authorization', user.auth);

  async function page(user: TestUser, query: Record<string, string | number> = {}): Promise<DeliveryPage> {
    const res = await list(user, query);
    expect(res.status).toBe(200);
    return res.body as DeliveryPage;
  }

  const sendTest = (user: TestUser, channel: string) =>
    ctx.http.post(`/users/me/notification-prefs/${channel}/test`).set('Authorization', user.auth);

  const redeliver = (user: TestUser, id: string) =>
    ctx.http.post(`/users/me/deliveries/${id}/redeliver`).set('Authorization', user.auth);

  /** A 202 answer's delivery. */
  async function accepted(request: PromiseLike<{ status: number; body: unknown }>): Promise<Delivery> {
    const res = await request;
    expect(res).toMatchObject({ status: 202 });
    return res.body as Delivery;
  }

  /** The delivery as the log shows it once it is no longer PENDING. */
  function finished(user: TestUser, id: string): Promise<Delivery> {
    return waitFor(`delivery ${id} finished`, async () => {
      const found = (await page(user, { limit: 100 })).items.find((item) => item.id === id);
      return found && found.status !== 'PENDING' && found;
    });
  }

  /** A webhook preference of `user` at a fresh path of the receiver, which knows its secret. */
  async function hookOf(user: TestUser): Promise<{ path: string; secret: string }> {
    const path = `/hook-${randomBytes(4).toString('hex')}`;
    const pref = await setPref(ctx, user, { channel: 'WEBHOOK', address: receiver.url(path) });
    receiver.setSecret(path, pref.secret!);
    return { path, secret: pref.secret! };
  }

  const hitsOf = (path: string) => receiver.received.filter((hit) => hit.path === path);

  async function nthHit(path: string, count: number): Promise<ReceivedWebhook> {
    const hits = await waitFor(`${count} hits on ${path}`, async () => {
      const found = hitsOf(path);
      return found.length >= count && found;
    });
    return hits[count - 1];
  }

  /** A published task of a class of its own, with `member` in it; the task's notifications follow. */
  async function publishTo(member: TestUser): Promise<string> {
    const owner = await createUser(ctx);
    const cls = await createClass(ctx, owner, { name: 'Physics' });
    await addMember(ctx, cls.id, member);
    const task = await createTask(ctx, cls.id, owner, { title: 'Pendulum' });
    return task.id;
  }

  describe('GET /users/me/deliveries', () => {
    it("lists the caller's deliveries of every channel, newest first, and nobody else's", async () => {
      const member = await createUser(ctx);
      const classmate = await createUser(ctx);
      const { path } = await hookOf(member);
      await setPref(ctx, member, { channel: 'MESSENGER', address: '-100500' });
      const owner = await createUser(ctx);
      const cls = await createClass(ctx, owner, { name: 'Physics' });
      await addMember(ctx, cls.id, member);
      await addMember(ctx, cls.id, classmate);
      await createTask(ctx, cls.id, owner, { title: 'Pendulum' });
      await nthHit(path, 1);

      const items = await waitFor('three deliveries sent', async () => {
        const { items } = await page(member);
        return items.length === 3 && items.every((item) => item.status === 'SENT') && items;
      });
      const [notification] = await ctx.db.query(`SELECT id FROM notifications WHERE user_id = $1`, [
        member.id,
      ]);
      expect(items.map((item) => item.channel).sort()).toEqual(['EMAIL', 'MESSENGER', 'WEBHOOK']);
      for (const item of items) {
        expect(item).toEqual({
          id: expect.stringMatching(UUID_PATTERN),
          notificationId: notification.id,
          type: 'TASK_PUBLISHED',
          channel: item.channel,
          address: { EMAIL: member.email, MESSENGER: '-100500', WEBHOOK: receiver.url(path) }[item.channel],
          status: 'SENT',
          attempts: 1,
          lastError: null,
          nextAttemptAt: null,
          sentAt: expect.stringMatching(ISO_TIMESTAMP),
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
        });
      }
      const created = items.map((item) => item.createdAt);
      expect([...created].sort().reverse()).toEqual(created);
      // The classmate's e-mail of the same task is in their log only.
      const theirs = await waitFor('classmate delivery', async () => (await page(classmate)).items);
      expect(theirs.map((item) => item.id)).not.toContain(items[0].id);
      expect(items.map((item) => item.id)).not.toContain(theirs[0].id);
    });

    it('leaves account e-mails out: they carry one-time links', async () => {
      const user = await createUser(ctx);
      await ctx.app.get(DeliveryOutbox).enqueueMail({
        to: user.email,
        subject: 'Reset your password',
        text: 'https://app.test/reset?token=secret',
        html: '<p>reset</p>',
      });
      await smtp.waitFor(user.email);
      expect(await page(user)).toEqual({ items: [], nextCursor: null });
    });

    it('filters by channel and status and pages with the cursor across pages, ties on createdAt included', async () => {
      const user = await createUser(ctx);
      // Seven deliveries of one statement share created_at: the order falls back to the id.
      await ctx.db.query(
        `INSERT INTO notification_deliveries (user_id, type, channel, address, status, attempts, sent_at)
         SELECT $1, 'TEST', CASE WHEN i <= 4 THEN 'EMAIL' ELSE 'MESSENGER' END, 'x',
                CASE WHEN i % 2 = 0 THEN 'SENT' ELSE 'FAILED' END, 1, now()
           FROM generate_series(1, 7) i`,
        [user.id],
      );
      const all = await page(user, { limit: 100 });
      expect(all.items).toHaveLength(7);
      expect(all.nextCursor).toBeNull();
      const ids = all.items.map((item) => item.id);
      expect([...ids].sort().reverse()).toEqual(ids);

      const walk = async (query: Record<string, string | number>): Promise<Delivery[]> => {
        const seen: Delivery[] = [];
        let cursor: string | null = null;
        do {
          const next: DeliveryPage = await page(user, { ...query, limit: 2, ...(cursor ? { cursor } : {}) });
          expect(next.items.length).toBeLessThanOrEqual(2);
          seen.push(...next.items);
          cursor = next.nextCursor;
        } while (cursor);
        return seen;
      };
      expect((await walk({})).map((item) => item.id)).toEqual(ids);
      const sentEmails = all.items.filter((item) => item.channel === 'EMAIL' && item.status === 'SENT');
      expect(sentEmails).toHaveLength(2);
      expect(await walk({ channel: 'EMAIL', status: 'SENT' })).toEqual(sentEmails);
      expect(await walk({ channel: 'MESSENGER' })).toEqual(
        all.items.filter((item) => item.channel === 'MESSENGER'),
      );
      expect(await walk({ status: 'FAILED' })).toEqual(all.items.filter((item) => item.status === 'FAILED'));
      expect(await page(user, { status: 'SKIPPED' })).toEqual({ items: [], nextCursor: null });
      // A full last page says so: no cursor to an empty page.
      expect((await page(user, { channel: 'MESSENGER', limit: 3 })).nextCursor).toBeNull();
    });

    it('keeps a cursor valid after retention deleted the row it came from, and lists only kept deliveries', async () => {
      const user = await createUser(ctx);
      await ctx.db.query(
        `INSERT INTO notification_deliveries (user_id, type, channel, address, status, attempts, created_at, updated_at)
         SELECT $1, 'TEST', 'EMAIL', 'x', 'SENT', 1, now() - make_interval(days => i), now() - make_interval(days => i)
           FROM generate_series(1, 10, 3) i`,
        [user.id],
      );
      const first = await page(user, { limit: 2 });
      expect(first.items).toHaveLength(2);
      await ctx.app.get(DeliveryRetention).purgeFinished();
      // Ages 1, 4, 7, 10 days: the last two are gone; the cursor points past the 4-day one.
      const rest = await page(user, { limit: 2, cursor: first.nextCursor! });
      expect(rest).toEqual({ items: [], nextCursor: null });
      expect((await page(user)).items.map((item) => item.id)).toEqual(first.items.map((item) => item.id));
    });

    it.each([
      ['limit=0', { limit: 0 }],
      ['limit=101', { limit: 101 }],
      ['limit=ten', { limit: 'ten' }],
      ['an unknown channel', { channel: 'SMS' }],
      ['an unknown status', { status: 'LOST' }],
      ['a cursor that is not one', { cursor: 'bm90IGEgY3Vyc29y' }],
      [
        'a cursor with a bad time',
        { cursor: Buffer.from(`2026-13-45T99:00:00.000000Z|${randomUUID()}`).toString('base64url') },
      ],
      ['an unknown parameter', { sort: 'asc' }],
    ])('answers 400 VALIDATION_ERROR for %s', async (_case, query) => {
      const user = await createUser(ctx);
      const res = await list(user, query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('says a non-numeric limit is not an integer rather than out of range', async () => {
      const res = await list(await createUser(ctx), { limit: 'ten' });
      expect(res.body.error).toMatch(/limit must be an integer/);
    });

    it('answers 401 without a token', async () => {
      const res = await ctx.http.get('/users/me/deliveries');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(apiError('UNAUTHORIZED'));
    });
  });

  describe('POST /users/me/notification-prefs/:channel/test', () => {
    it('posts a signed TEST event with empty data to the webhook, logged like any delivery', async () => {
      const user = await createUser(ctx);
      const { path, secret } = await hookOf(user);
      const queued = await accepted(sendTest(user, 'WEBHOOK'));
      expect(queued).toEqual({
        id: expect.stringMatching(UUID_PATTERN),
        notificationId: null,
        type: 'TEST',
        channel: 'WEBHOOK',
        address: receiver.url(path),
        status: 'PENDING',
        attempts: 0,
        lastError: null,
        nextAttemptAt: expect.stringMatching(ISO_TIMESTAMP),
        sentAt: null,
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      const hit = await nthHit(path, 1);
      expect(new Webhook(secret).verify(hit.raw, hit.headers as Record<string, string>)).toEqual({
        id: queued.id,
        type: 'TEST',
        createdAt: queued.createdAt,
        data: {},
      });
      expect(hit.headers['webhook-id']).toBe(queued.id);
      expect(await finished(user, queued.id)).toMatchObject({
        status: 'SENT',
        attempts: 1,
        sentAt: expect.stringMatching(ISO_TIMESTAMP),
        nextAttemptAt: null,
      });
    });

    it('sends a short test text by e-mail and messenger, through a paused preference too', async () => {
      const user = await createUser(ctx);
      const address = `alt-${randomBytes(4).toString('hex')}@example.com`;
      await setPref(ctx, user, { channel: 'EMAIL', address, isEnabled: false });
      await setPref(ctx, user, { channel: 'MESSENGER', address: '-100600' });
      const mail = await accepted(sendTest(user, 'EMAIL'));
      const message = await accepted(sendTest(user, 'MESSENGER'));
      expect(mail).toMatchObject({ channel: 'EMAIL', address, type: 'TEST' });
      const received = await smtp.waitFor(address);
      expect(received.subject).toBe('Test notification');
      expect(received.text).toContain('This is a test');
      const sent = await waitFor('test message', async () =>
        telegram.messages.find((item) => item.chatId === '-100600'),
      );
      expect(sent.text).toMatch(/^Test notification\n\nThis is a test/);
      expect(await finished(user, mail.id)).toMatchObject({ status: 'SENT' });
      expect(await finished(user, message.id)).toMatchObject({ status: 'SENT' });
    });

    it('answers 404 without such a preference and 400 for an unknown channel', async () => {
      const user = await createUser(ctx);
      const missing = await sendTest(user, 'WEBHOOK');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(apiError('NOT_FOUND'));
      const unknown = await sendTest(user, 'SMS');
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual(apiError('VALIDATION_ERROR'));
      expect((await page(user)).items).toEqual([]);
    });

    it('allows 10 test events per hour per user, then 429 RATE_LIMITED with Retry-After', async () => {
      const user = await createUser(ctx);
      const other = await createUser(ctx);
      await setPref(ctx, user, { channel: 'MESSENGER', address: '-100700' });
      await setPref(ctx, other, { channel: 'MESSENGER', address: '-100701' });
      for (let i = 0; i < 10; i += 1) await accepted(sendTest(user, 'MESSENGER'));
      const limited = await sendTest(user, 'MESSENGER');
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual(apiError('RATE_LIMITED'));
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(3000);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect((await page(user, { limit: 100 })).items).toHaveLength(10);
      // Another user's count is their own.
      await accepted(sendTest(other, 'MESSENGER'));
    });
  });

  describe('POST /users/me/deliveries/:deliveryId/redeliver', () => {
    it("redelivers a failed webhook with the original webhook-id, a new timestamp and the preference's current secret", async () => {
      const member = await createUser(ctx);
      const { path } = await hookOf(member);
      receiver.failNext(path, 1, 500);
      await publishTo(member);
      const first = await nthHit(path, 1);
      const original = await waitFor('failed webhook', async () =>
        (await page(member, { channel: 'WEBHOOK', status: 'FAILED' })).items.at(0),
      );
      expect(original).toMatchObject({ attempts: 1, lastError: 'HTTP 500', sentAt: null });
      expect(first.headers['webhook-id']).toBe(original.id);

      // The secret changes meanwhile (as a rotation would): the redelivery is signed with the current one.
      const rotated = `whsec_${randomBytes(32).toString('base64')}`;
      await ctx.db.query(
        `UPDATE notification_prefs SET secret = $2 WHERE user_id = $1 AND channel = 'WEBHOOK'`,
        [member.id, rotated],
      );
      receiver.setSecret(path, rotated);
      await sleep(1100);
      const copy = await accepted(redeliver(member, original.id));
      expect(copy).toMatchObject({
        notificationId: original.notificationId,
        type: 'TASK_PUBLISHED',
        channel: 'WEBHOOK',
        address: original.address,
        status: 'PENDING',
        attempts: 0,
        lastError: null,
        sentAt: null,
      });
      expect(copy.id).not.toBe(original.id);
      const second = await nthHit(path, 2);
      expect(second.headers['webhook-id']).toBe(original.id);
      expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(
        Number(first.headers['webhook-timestamp']),
      );
      expect(new Webhook(rotated).verify(second.raw, second.headers as Record<string, string>)).toEqual(
        first.body,
      );
      expect(await finished(member, copy.id)).toMatchObject({ status: 'SENT', attempts: 1 });
      // The original stays as it was; the log shows both, the copy first.
      const webhooks = (await page(member, { channel: 'WEBHOOK' })).items;
      expect(webhooks.map((item) => [item.id, item.status])).toEqual([
        [copy.id, 'SENT'],
        [original.id, 'FAILED'],
      ]);

      // A redelivery of the redelivery keeps the first id too.
      await accepted(redeliver(member, copy.id));
      expect((await nthHit(path, 3)).headers['webhook-id']).toBe(original.id);
    });

    it('redelivers a sent e-mail and messenger message', async () => {
      const member = await createUser(ctx);
      await setPref(ctx, member, { channel: 'MESSENGER', address: '-100800' });
      await publishTo(member);
      const sent = await waitFor('both sent', async () => {
        const { items } = await page(member, { status: 'SENT' });
        return items.length === 2 && items;
      });
      for (const item of sent) await accepted(redeliver(member, item.id));
      await smtp.waitFor(member.email);
      await smtp.waitFor(member.email);
      await waitFor('second message', async () =>
        telegram.messages.filter((message) => message.chatId === '-100800').length === 2 ? true : undefined,
      );
    });

    it('answers 409 CONFLICT for a PENDING or SKIPPED delivery and while a redelivery of it is pending', async () => {
      const user = await createUser(ctx);
      const { path } = await hookOf(user);
      const test = await accepted(sendTest(user, 'WEBHOOK'));
      await finished(user, test.id);
      // The receiver answers slowly: the redelivery stays PENDING while it waits.
      receiver.delay(path, 1500);
      const copy = await accepted(redeliver(user, test.id));
      for (const id of [copy.id, test.id]) {
        const res = await redeliver(user, id);
        expect(res.status).toBe(409);
        expect(res.body).toEqual(apiError('CONFLICT'));
      }
      await finished(user, copy.id);
      receiver.delay(path, 0);
      await ctx.db.query(`UPDATE notification_deliveries SET status = 'SKIPPED' WHERE id = $1`, [test.id]);
      const skipped = await redeliver(user, test.id);
      expect(skipped.status).toBe(409);
      expect(skipped.body).toEqual(apiError('CONFLICT'));
      // Once the copy is finished, the chain may be redelivered again.
      await accepted(redeliver(user, copy.id));
    });

    it("answers 404 for another user's or an unknown delivery and 400 for a malformed id", async () => {
      const user = await createUser(ctx);
      const stranger = await createUser(ctx);
      await setPref(ctx, user, { channel: 'MESSENGER', address: '-100900' });
      const test = await accepted(sendTest(user, 'MESSENGER'));
      await finished(user, test.id);
      for (const [who, id] of [
        [stranger, test.id],
        [user, randomUUID()],
      ] as const) {
        const res = await redeliver(who, id);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(apiError('NOT_FOUND'));
      }
      const malformed = await redeliver(user, 'not-a-uuid');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual(apiError('VALIDATION_ERROR'));
      expect((await page(user)).items).toHaveLength(1);
    });

    it('allows 100 redelivery requests per hour per user, then 429 RATE_LIMITED', async () => {
      const user = await createUser(ctx);
      for (let i = 0; i < 100; i += 1) expect((await redeliver(user, randomUUID())).status).toBe(404);
      const limited = await redeliver(user, randomUUID());
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual(apiError('RATE_LIMITED'));
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(3000);
    });
  });

  describe('lastError', () => {
    it('names a messenger failure without the bot token, cut to 500 characters', async () => {
      const user = await createUser(ctx);
      await setPref(ctx, user, { channel: 'MESSENGER', address: '-101000' });
      // A proxy that echoes the request path (with the token) and a long page.
      telegram.failNext(1, 404, `Not Found: /bot${BOT_TOKEN}/sendMessage ${'lorem ipsum '.repeat(400)}`);
      const test = await accepted(sendTest(user, 'MESSENGER'));
      const failed = await finished(user, test.id);
      expect(failed.status).toBe('FAILED');
      expect(failed.lastError).toMatch(
        /^Telegram API HTTP 404: Not Found: \/bot\[redacted\]\/sendMessage lorem/,
      );
      expect(failed.lastError).not.toContain('TEST-bot-token_secret');
      expect(failed.lastError!.length).toBeLessThanOrEqual(500);
    });

    it('names an SMTP failure without the SMTP password', async () => {
      const user = await createUser(ctx);
      const address = `refused-${randomBytes(4).toString('hex')}@example.com`;
      await setPref(ctx, user, { channel: 'EMAIL', address });
      smtp.rejectRecipients.add(address);
      smtp.rejectionText = `Mailbox unavailable (login mailer:${SMTP_PASSWORD})`;
      try {
        const test = await accepted(sendTest(user, 'EMAIL'));
        const failed = await finished(user, test.id);
        expect(failed.status).toBe('FAILED');
        expect(failed.lastError).toContain('550');
        expect(failed.lastError).toContain('Mailbox unavailable (login mailer:[redacted])');
        expect(failed.lastError).not.toContain(SMTP_PASSWORD);
      } finally {
        smtp.rejectionText = 'Mailbox unavailable';
      }
    });

    it('names a webhook failure by its status, without the secret or the body', async () => {
      const user = await createUser(ctx);
      const { path, secret } = await hookOf(user);
      receiver.failNext(path, 1, 502);
      const test = await accepted(sendTest(user, 'WEBHOOK'));
      const failed = await finished(user, test.id);
      expect(failed).toMatchObject({ status: 'FAILED', lastError: 'HTTP 502' });
      expect(JSON.stringify(await page(user))).not.toContain(secret.slice(6));
    });
  });
});
