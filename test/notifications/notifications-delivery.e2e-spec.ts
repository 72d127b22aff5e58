import { randomBytes } from 'node:crypto';
import { DeliveryOutbox } from '../../src/notifications/delivery/delivery-outbox';
import { NotificationChannelName } from '../../src/notifications/entities/notification-pref.entity';
import { addMember, createClass } from '../utils/classes';
import {
  deliveriesOf,
  DeliveryRow,
  FAST_NOTIFICATIONS,
  IDLE_JOBS,
  inbox,
  setPref,
  useAppWithChannelFakes,
  waitFor,
} from '../utils/notifications';
import { putSubmission, seedSubmissions } from '../utils/submissions';
import { createDraft, createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

const BOT_TOKEN = '123456:TEST-token';
const MAIL_FROM = 'Classroom Tasks <noreply@classroom.test>';

describe('notifications: delivery over EMAIL, WEBHOOK and MESSENGER', () => {
  const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes(() => ({
    MAIL_FROM,
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    DELIVERY_MAX_ATTEMPTS: '3',
  }));

  /** A class owned by the first user, with the others as members. */
  async function classOf(owner: TestUser, ...members: TestUser[]): Promise<string> {
    const cls = await createClass(ctx, owner, { name: 'Chemistry' });
    for (const member of members) await addMember(ctx, cls.id, member);
    return cls.id;
  }

  /** A webhook preference of `user` pointing at a fresh path of the receiver, which knows its secret. */
  async function hookOf(user: TestUser): Promise<string> {
    const path = `/hook-${randomBytes(4).toString('hex')}`;
    const pref = await setPref(ctx, user, { channel: 'WEBHOOK', address: receiver.url(path) });
    receiver.setSecret(path, pref.secret!);
    return path;
  }

  const hits = (path: string) => receiver.received.filter((hit) => hit.path === path);

  async function delivery(user: TestUser, channel: string, status: string): Promise<DeliveryRow> {
    return waitFor(`${channel} delivery ${status}`, async () =>
      (await deliveriesOf(ctx, user)).find((row) => row.channel === channel && row.status === status),
    );
  }

  it('e-mails the registration address without an EMAIL preference, the preference address with one, nobody when paused', async () => {
    const owner = await createUser(ctx);
    const plain = await createUser(ctx);
    const paused = await createUser(ctx);
    await setPref(ctx, owner, { channel: 'EMAIL', address: 'Owner.Alt@Example.com' });
    await setPref(ctx, paused, { channel: 'EMAIL', address: paused.email, isEnabled: false });
    await setPref(ctx, paused, { channel: 'MESSENGER', address: '-100777' });
    const classId = await classOf(owner, plain, paused);
    const task = await createTask(ctx, classId, owner, { title: 'Titration' });

    const mail = await smtp.waitFor(plain.email);
    expect(mail.subject).toBe('New task in Chemistry: Titration');
    expect(mail.text).toContain('"Titration" was published in Chemistry. It has no due date.');
    expect(mail.from).toBe('noreply@classroom.test');
    await smtp.waitFor('owner.alt@example.com');
    // The paused user's messenger delivery shows their notification was routed.
    await waitFor('messenger message', async () =>
      telegram.messages.find((message) => message.chatId === '-100777'),
    );
    expect(
      smtp.messages.filter(
        (message) => message.to.includes(paused.email) || message.to.includes(owner.email),
      ),
    ).toEqual([]);
    expect((await deliveriesOf(ctx, paused)).map((row) => row.channel)).toEqual(['MESSENGER']);
    const sent = await delivery(plain, 'EMAIL', 'SENT');
    expect(sent).toMatchObject({ address: plain.email, attempts: 1, last_error: null });
    expect(await deliveriesOf(ctx, plain)).toHaveLength(1);
    expect((await inbox(ctx, plain)).items.map((item) => item.taskId)).toEqual([task.id]);
  });

  it('posts a Standard Webhooks signed event; webhook-id is the delivery id', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    const path = await hookOf(member);
    const classId = await classOf(owner, member);
    const task = await createTask(ctx, classId, owner, {
      title: 'Buffer lab',
      startAt: '2020-01-01T08:00:00.000Z',
      dueAt: '2030-05-01T12:00:00.000Z',
    });
    const [hit] = await waitFor('webhook', async () => hits(path).length > 0 && hits(path));
    const [item] = (await inbox(ctx, member)).items;
    expect(hit.verified).toBe(true);
    expect(hit.body).toEqual({
      id: item.id,
      type: 'TASK_PUBLISHED',
      createdAt: (item as unknown as { createdAt: string }).createdAt,
      data: {
        taskId: task.id,
        taskTitle: 'Buffer lab',
        classId,
        className: 'Chemistry',
        startAt: '2020-01-01T08:00:00.000Z',
        dueAt: '2030-05-01T12:00:00.000Z',
      },
    });
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const sent = await delivery(member, 'WEBHOOK', 'SENT');
    expect(hit.headers['webhook-id']).toBe(sent.id);
    expect(sent.attempts).toBe(1);
  });

  it('retries a failing webhook with backoff and the same webhook-id until it succeeds', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    const path = await hookOf(member);
    receiver.failNext(path, 2, 503);
    await createTask(ctx, await classOf(owner, member), owner);
    const sent = await delivery(member, 'WEBHOOK', 'SENT');
    expect(sent.attempts).toBe(3);
    expect(sent.last_error).toBe('HTTP 503');
    expect(hits(path).map((hit) => hit.status)).toEqual([503, 503, 204]);
    expect(new Set(hits(path).map((hit) => hit.headers['webhook-id']))).toEqual(new Set([sent.id]));
    expect(hits(path).every((hit) => hit.verified)).toBe(true);
  });

  it('marks a delivery FAILED with the last error after DELIVERY_MAX_ATTEMPTS; inbox and other channels go on', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    const path = await hookOf(member);
    receiver.failNext(path, 100, 500);
    const task = await createTask(ctx, await classOf(owner, member), owner);
    const failed = await delivery(member, 'WEBHOOK', 'FAILED');
    expect(failed).toMatchObject({ attempts: 3, last_error: 'HTTP 500' });
    expect(hits(path)).toHaveLength(3);
    await smtp.waitFor(member.email);
    await delivery(member, 'EMAIL', 'SENT');
    expect((await inbox(ctx, member)).items.map((item) => item.taskId)).toEqual([task.id]);
  });

  it('does not follow redirects: a 3xx answer is a failure', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    const path = await hookOf(member);
    receiver.failNext(path, 100, 302);
    await createTask(ctx, await classOf(owner, member), owner);
    const failed = await delivery(member, 'WEBHOOK', 'FAILED');
    expect(failed.last_error).toBe('redirect not followed (HTTP 302)');
  });

  it('keeps other deliveries moving while a webhook endpoint is slow', async () => {
    const owner = await createUser(ctx);
    const slow = await createUser(ctx);
    const fast = await createUser(ctx);
    const slowPath = await hookOf(slow);
    const fastPath = await hookOf(fast);
    receiver.delay(slowPath, 2500);
    await createTask(ctx, await classOf(owner, slow, fast), owner);
    await waitFor('fast webhook', async () => hits(fastPath).length > 0);
    await delivery(fast, 'WEBHOOK', 'SENT');
    const [slowRow] = (await deliveriesOf(ctx, slow)).filter((row) => row.channel === 'WEBHOOK');
    expect(slowRow.status).toBe('PENDING');
    expect(hits(slowPath)).toHaveLength(1);
    await delivery(slow, 'WEBHOOK', 'SENT');
  });

  it('sends messenger messages through the Telegram Bot API and retries its outages', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    await setPref(ctx, member, { channel: 'MESSENGER', address: '@student_chat' });
    telegram.failNext(1, 502);
    await createTask(ctx, await classOf(owner, member), owner, { title: 'Spectra' });
    const sent = await delivery(member, 'MESSENGER', 'SENT');
    expect(sent).toMatchObject({ attempts: 2, last_error: 'Telegram API HTTP 502: Simulated failure' });
    const [item] = (await inbox(ctx, member)).items;
    expect(telegram.messages.filter((message) => message.chatId === '@student_chat')).toEqual([
      { token: BOT_TOKEN, chatId: '@student_chat', text: `${item.title}\n\n${item.content}` },
    ]);
  });

  it('does not retry what Telegram refuses for good', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    await setPref(ctx, member, { channel: 'MESSENGER', address: '@gone_chat' });
    telegram.failNext(1, 403);
    await createTask(ctx, await classOf(owner, member), owner);
    const failed = await delivery(member, 'MESSENGER', 'FAILED');
    expect(failed).toMatchObject({ attempts: 1, last_error: 'Telegram API HTTP 403: Simulated failure' });
  });

  it("retakes a crashed worker's claim once its lease has run out", async () => {
    const payload = { subject: 'Held mail', text: 'Claimed by a worker that died', html: null };
    const [row] = await ctx.db.query(
      `INSERT INTO notification_deliveries (channel, address, payload, attempts, locked_until)
       VALUES ('EMAIL', 'held@example.com', $1, 1, now() + interval '1 hour') RETURNING id`,
      [payload],
    );
    await expect(smtp.waitFor('held@example.com', 500)).rejects.toThrow(/No mail/);
    await ctx.db.query(
      `UPDATE notification_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`,
      [row.id],
    );
    const mail = await smtp.waitFor('held@example.com');
    expect(mail.subject).toBe('Held mail');
    const after = await waitFor('delivery SENT', async () => {
      const [current] = await ctx.db.query(
        `SELECT status, attempts FROM notification_deliveries WHERE id = $1`,
        [row.id],
      );
      return current.status === 'SENT' && current;
    });
    expect(after).toEqual({ status: 'SENT', attempts: 2 });
  });

  describe('a retry whose notification is out of date by then', () => {
    /**
     * A member's notification of `type` about a new task (due in 2 hours), with a WEBHOOK retry queued as after
     * a failed attempt; `change` runs while the retry waits, then it becomes due. Answers the finished
     * delivery and the hits of its `webhook-id`.
     */
    async function retryAfter(
      type: 'TASK_PUBLISHED' | 'TASK_DUE_REMINDER',
      change: (room: { owner: TestUser; member: TestUser; classId: string; taskId: string }) => Promise<void>,
    ) {
      const owner = await createUser(ctx);
      const member = await createUser(ctx);
      const classId = await classOf(owner, member);
      const dueAt = new Date(Date.now() + 2 * 3_600_000).toISOString();
      const { id: taskId } = await createTask(ctx, classId, owner, { dueAt });
      // The default offset of 24 hours has passed already: the reminder comes at the next scheduled run.
      const items = await waitFor('both notifications', async () => {
        const found = (await inbox(ctx, member)).items;
        return found.length === 2 && found;
      });
      const item = items.find((notification) => notification.type === type)!;
      const path = await hookOf(member);
      const [{ id }] = await ctx.db.query(
        `INSERT INTO notification_deliveries
                (notification_id, user_id, type, channel, address, attempts, last_error, next_attempt_at)
         SELECT id, user_id, type, 'WEBHOOK', $2, 1, 'HTTP 503', now() + interval '1 hour'
           FROM notifications WHERE id = $1
         RETURNING id`,
        [item.id, receiver.url(path)],
      );
      await change({ owner, member, classId, taskId });
      await ctx.db.query(`UPDATE notification_deliveries SET next_attempt_at = now() WHERE id = $1`, [id]);
      const row = await waitFor('retry finished', async () => {
        const [current]: DeliveryRow[] = await ctx.db.query(
          `SELECT * FROM notification_deliveries WHERE id = $1`,
          [id],
        );
        return current.status !== 'PENDING' && current;
      });
      // Only this retry's hits: a reminder armed by `change` may reach the same hook.
      return { row, hits: hits(path).filter((hit) => hit.headers['webhook-id'] === id) };
    }

    it('still goes out when nothing changed', async () => {
      for (const type of ['TASK_PUBLISHED', 'TASK_DUE_REMINDER'] as const) {
        const { row, hits: received } = await retryAfter(type, async () => undefined);
        expect(row).toMatchObject({ status: 'SENT', attempts: 2 });
        expect(received).toHaveLength(1);
      }
    });

    it.each([
      [
        'the task was deleted',
        async ({ owner, taskId }: { owner: TestUser; taskId: string }) => {
          // With a submission the task is soft-deleted, and its notifications stay.
          await seedSubmissions(ctx, taskId, [owner.id]);
          await ctx.http.delete(`/tasks/${taskId}`).set('Authorization', owner.auth).expect(204);
        },
      ],
      [
        'the recipient left the class',
        async ({ member, classId }: { member: TestUser; classId: string }) => {
          await ctx.http
            .delete(`/classes/${classId}/members/${member.id}`)
            .set('Authorization', member.auth)
            .expect(204);
        },
      ],
      [
        'the recipient is deactivated',
        async ({ member }: { member: TestUser }) => {
          await ctx.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [member.id]);
        },
      ],
    ])('is dropped for both types when %s', async (reason, change) => {
      for (const type of ['TASK_PUBLISHED', 'TASK_DUE_REMINDER'] as const) {
        const { row, hits: received } = await retryAfter(type, change);
        expect(row).toMatchObject({ status: 'SKIPPED', attempts: 1, last_error: `not sent: ${reason}` });
        expect(received).toEqual([]);
      }
    });

    it.each([
      [
        'the recipient has submitted',
        async ({ member, taskId }: { member: TestUser; taskId: string }) => {
          await putSubmission(ctx, taskId, member, 'done');
        },
      ],
      [
        'the due time moved',
        async ({ owner, taskId }: { owner: TestUser; taskId: string }) => {
          await ctx.http
            .patch(`/tasks/${taskId}`)
            .set('Authorization', owner.auth)
            .send({ dueAt: new Date(Date.now() + 5 * 3_600_000).toISOString() })
            .expect(200);
        },
      ],
      [
        'the due time has passed',
        async ({ taskId }: { taskId: string }) => {
          // As if the retry had waited past the deadline.
          await ctx.db.query(
            `WITH moved AS (UPDATE tasks SET due_at = due_at - interval '3 hours' WHERE id = $1)
             UPDATE notifications SET due_at = due_at - interval '3 hours' WHERE task_id = $1`,
            [taskId],
          );
        },
      ],
    ])('is dropped for a reminder when %s', async (reason, change) => {
      const reminder = await retryAfter('TASK_DUE_REMINDER', change);
      expect(reminder.row).toMatchObject({
        status: 'SKIPPED',
        attempts: 1,
        last_error: `not sent: ${reason}`,
      });
      expect(reminder.hits).toEqual([]);
    });
  });

  describe('order of claims', () => {
    let idle: TestApp;
    beforeAll(async () => {
      // No job runs: the test claims by itself.
      idle = await createTestApp(IDLE_JOBS);
    });
    afterAll(async () => idle.close());

    it('claims an account e-mail before the notification e-mails queued earlier', async () => {
      // A publication to a large class queues thousands of e-mails; a password reset must not wait for them.
      const owner = await createUser(idle);
      const cls = await createClass(idle, owner);
      for (let i = 0; i < 3; i += 1) {
        const draft = await createDraft(idle, cls.id, owner);
        await idle.db.query(
          `WITH announced AS (
             INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, title, content, status)
             VALUES ($1, 'TASK_PUBLISHED', $2, $3, 'Task', 'Class', 'Title', 'Content', 'SENT')
             RETURNING id, user_id, type)
           INSERT INTO notification_deliveries (notification_id, user_id, type, channel, address, next_attempt_at)
           SELECT id, user_id, type, 'EMAIL', $4, now() - interval '1 minute' FROM announced`,
          [owner.id, draft.id, cls.id, owner.email],
        );
      }
      const newcomer = `newcomer-${randomBytes(4).toString('hex')}@example.com`;
      await idle.http.post('/auth/register').send({ email: newcomer }).expect(200);

      const outbox = idle.app.get(DeliveryOutbox);
      const [first] = await outbox.claim(NotificationChannelName.EMAIL, 1);
      expect(first).toMatchObject({ address: newcomer, event: null });
      const rest = await outbox.claim(NotificationChannelName.EMAIL, 10);
      expect(rest.map((job) => job.address)).toEqual([owner.email, owner.email, owner.email]);
    });
  });

  describe('without private webhooks and without a Telegram token', () => {
    let guarded: TestApp;
    beforeAll(async () => {
      guarded = await createTestApp({
        ...FAST_NOTIFICATIONS,
        SMTP_URL: smtp.url,
        WEBHOOK_ALLOW_PRIVATE: 'false',
      });
    });
    afterAll(async () => guarded.close());

    it.each([
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://172.16.5.4/hook',
      'http://100.64.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/hook',
      // Unparsable for the host check: was a 500.
      'https://xn--a.com/hook',
      'http://[fe80::1%25eth0]/hook',
    ])('refuses the webhook address %s', async (address) => {
      const user = await createUser(guarded);
      const res = await guarded.http
        .put('/users/me/notification-prefs')
        .set('Authorization', user.auth)
        .send({ channel: 'WEBHOOK', address });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
    });

    it('accepts a public webhook address', async () => {
      const user = await createUser(guarded);
      await setPref(guarded, user, { channel: 'WEBHOOK', address: 'https://hooks.example.com/ok' });
    });

    it('refuses at delivery a host that resolves to a private address; MESSENGER fails at once without a token', async () => {
      const owner = await createUser(guarded);
      const member = await createUser(guarded);
      const path = `/ssrf-${randomBytes(4).toString('hex')}`;
      // As if the name had resolved to a public address when the preference was saved.
      await guarded.db.query(
        `INSERT INTO notification_prefs (user_id, channel, address, secret) VALUES ($1, 'WEBHOOK', $2, $3)`,
        [
          member.id,
          receiver.url(path).replace('127.0.0.1', 'localhost'),
          `whsec_${randomBytes(32).toString('base64')}`,
        ],
      );
      await setPref(guarded, member, { channel: 'MESSENGER', address: '12345' });
      const cls = await createClass(guarded, owner);
      await addMember(guarded, cls.id, member);
      await createTask(guarded, cls.id, owner);
      const rows = await waitFor('all deliveries done', async () => {
        const all = await deliveriesOf(guarded, member);
        return all.length === 3 && all.every((row) => row.status !== 'PENDING') && all;
      });
      expect(rows.find((row) => row.channel === 'WEBHOOK')).toMatchObject({
        attempts: 1,
        last_error: 'refused: localhost resolves to the non-public address 127.0.0.1',
      });
      expect(rows.find((row) => row.channel === 'MESSENGER')).toMatchObject({
        attempts: 1,
        last_error: 'TELEGRAM_BOT_TOKEN is not configured',
      });
      expect(rows.find((row) => row.channel === 'EMAIL')).toMatchObject({ status: 'SENT' });
      expect(hits(path)).toEqual([]);
    });
  });
});
