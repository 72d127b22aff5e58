import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { addMember, createClass } from '../utils/classes';
import {
  createSharedDatabase,
  deliveriesOf,
  FAST_NOTIFICATIONS,
  setPref,
  waitFor,
} from '../utils/notifications';
import { createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { SmtpCapture, startSmtpCapture } from '../fakes/smtp-server';
import { startWebhookReceiver, WebhookReceiver } from '../fakes/webhook-receiver';

/** An SMTP_URL where nothing listens: an SMTP outage. */
async function deadSmtpUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `smtp://127.0.0.1:${port}`;
}

const count = async (app: TestApp, sql: string, params: unknown[] = []): Promise<number> =>
  (await app.db.query(`SELECT count(*)::int AS n FROM (${sql}) q`, params))[0].n;

describe('notifications: several instances and restarts on one database', () => {
  let smtp: SmtpCapture;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpCapture(), startWebhookReceiver()]);
  });
  afterAll(async () => Promise.all([smtp.close(), receiver.close()]));
  // Each test starts two or three whole instances on one database, which takes a while on a busy runner.
  jest.setTimeout(90_000);

  async function hookOf(app: TestApp, user: TestUser): Promise<string> {
    const path = `/hook-${randomBytes(4).toString('hex')}`;
    const pref = await setPref(app, user, { channel: 'WEBHOOK', address: receiver.url(path) });
    receiver.setSecret(path, pref.secret!);
    return path;
  }

  it('two instances produce and deliver every notification exactly once', async () => {
    const database = await createSharedDatabase();
    const env = { ...FAST_NOTIFICATIONS, SMTP_URL: smtp.url, REMINDER_HOURS_BEFORE_DUE: '0.005' };
    const [first, second] = await Promise.all([
      createTestApp(env, { databaseUrl: database.url }),
      createTestApp(env, { databaseUrl: database.url }),
    ]);
    try {
      const owner = await createUser(first);
      const cls = await createClass(first, owner, { name: 'Twins' });
      const members: TestUser[] = [];
      for (let i = 0; i < 12; i += 1) {
        const member = await createUser(first);
        await addMember(first, cls.id, member);
        await hookOf(first, member);
        members.push(member);
      }
      // The reminder moment (18 s before) has passed at once; a reminder claimed after dueAt is not sent.
      const dueAt = new Date(Date.now() + 15_000).toISOString();
      const tasks = [
        await createTask(first, cls.id, owner, { dueAt }),
        await createTask(second, cls.id, owner, { dueAt }),
        await createTask(first, cls.id, owner),
      ];
      const recipients = members.length + 1;
      // Published: 3 tasks; reminders: 2 tasks. Webhooks go to the members, e-mail to them and the owner.
      const notifications = 5 * recipients;
      const webhooks = 5 * members.length;
      await waitFor(
        'every delivery done',
        async () =>
          (await count(first, `SELECT 1 FROM notifications WHERE status = 'SENT'`)) === notifications &&
          (await count(first, `SELECT 1 FROM notification_deliveries WHERE status = 'SENT'`)) ===
            notifications + webhooks,
        20_000,
      );
      // More runs of both instances' jobs add nothing.
      await new Promise((resolve) => setTimeout(resolve, 1500));

      expect(await count(first, `SELECT 1 FROM notifications`)).toBe(notifications);
      expect(await count(first, `SELECT 1 FROM notification_deliveries`)).toBe(notifications + webhooks);
      expect(
        await count(
          first,
          `SELECT task_id, user_id, type FROM notifications GROUP BY 1, 2, 3 HAVING count(*) > 1`,
        ),
      ).toBe(0);
      const hits = receiver.received.filter((hit) => hit.body && hit.verified);
      const mine = hits.filter((hit) =>
        tasks.some((task) => (hit.body as { data: { taskId: string } }).data.taskId === task.id),
      );
      expect(mine).toHaveLength(webhooks);
      expect(new Set(mine.map((hit) => hit.headers['webhook-id'])).size).toBe(webhooks);
      for (const user of [owner, ...members]) {
        expect(smtp.messages.filter((mail) => mail.to.includes(user.email))).toHaveLength(5);
      }
    } finally {
      await Promise.all([first.close(), second.close()]);
      await database.drop();
    }
  });

  it('a restart loses nothing: in-flight sends finish at shutdown, pending ones go out from the next instance', async () => {
    const database = await createSharedDatabase();
    const apps: TestApp[] = [];
    try {
      const outage = await createTestApp(
        { ...FAST_NOTIFICATIONS, SMTP_URL: await deadSmtpUrl(), DELIVERY_RETRY_BASE_SECONDS: '1' },
        { databaseUrl: database.url },
      );
      apps.push(outage);
      const owner = await createUser(outage);
      const member = await createUser(outage);
      const cls = await createClass(outage, owner);
      await addMember(outage, cls.id, member);
      const path = await hookOf(outage, member);
      receiver.delay(path, 1000);
      await createTask(outage, cls.id, owner, { title: 'Survives restarts' });
      // An account mail is queued on the same outbox.
      const newcomer = `newcomer-${randomBytes(4).toString('hex')}@example.com`;
      await outage.http.post('/auth/register').send({ email: newcomer }).expect(200);

      // The webhook is in flight, and the three e-mails have failed against the dead SMTP server.
      await waitFor('webhook in flight', async () => receiver.received.some((hit) => hit.path === path));
      await waitFor(
        'e-mail attempts failed',
        async () =>
          (await count(
            outage,
            `SELECT 1 FROM notification_deliveries WHERE channel = 'EMAIL' AND last_error IS NOT NULL`,
          )) === 3,
      );
      await outage.close();
      apps.pop();

      const restarted = await createTestApp(
        { ...FAST_NOTIFICATIONS, SMTP_URL: smtp.url },
        { databaseUrl: database.url },
      );
      apps.push(restarted);
      // SENT at once: the old instance finished it while shutting down (an abandoned claim would stay leased).
      const [webhook] = (await deliveriesOf(restarted, member)).filter((row) => row.channel === 'WEBHOOK');
      expect(webhook).toMatchObject({ status: 'SENT', attempts: 1 });

      expect((await smtp.waitFor(member.email)).subject).toContain('Survives restarts');
      expect((await smtp.waitFor(owner.email)).subject).toContain('Survives restarts');
      const verification = await smtp.waitFor(newcomer);
      expect(verification.subject).toBe('Complete your registration');
      expect(verification.text).toContain(`${restarted.config.appUrl}/register/complete?token=`);
      const emails = await waitFor('e-mails SENT', async () => {
        const rows: { status: string; attempts: number }[] = await restarted.db.query(
          `SELECT status, attempts FROM notification_deliveries WHERE channel = 'EMAIL'`,
        );
        return rows.every((row) => row.status === 'SENT') && rows;
      });
      expect(emails.every((row) => row.attempts >= 2)).toBe(true);
      expect(receiver.received.filter((hit) => hit.path === path)).toHaveLength(1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await database.drop();
    }
  });
});
