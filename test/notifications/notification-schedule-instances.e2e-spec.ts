import { addMember, createClass } from '../utils/classes';
import { MovableClock } from '../utils/clock';
import { createSharedDatabase, FAST_NOTIFICATIONS, waitFor } from '../utils/notifications';
import { createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';
import { SmtpCapture, startSmtpCapture } from '../fakes/smtp-server';

/** The digest is made once per user and local day, whichever instance runs first, and across a restart. */
describe('daily digest: several instances and a restart on one database', () => {
  jest.setTimeout(120_000);
  let smtp: SmtpCapture;
  let database: { url: string; drop(): Promise<void> };
  const apps: TestApp[] = [];
  // Both instances go by one clock.
  const clock = new MovableClock('2026-06-01T14:00:00.000Z');
  const start = async () => {
    const app = await createTestApp(
      { ...FAST_NOTIFICATIONS, SMTP_URL: smtp.url },
      { databaseUrl: database.url, clock },
    );
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    database = await createSharedDatabase();
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await database.drop();
    await smtp.close();
  });

  it('two instances make one digest per user; a restart at the digest minute makes no second', async () => {
    const [first, second] = await Promise.all([start(), start()]);
    const owner = await createUser(first);
    const cls = await createClass(first, owner);
    const users: TestUser[] = [];
    for (let i = 0; i < 8; i += 1) {
      const user = await createUser(first, { timezone: i % 2 ? 'Europe/Paris' : 'UTC' });
      await addMember(first, cls.id, user);
      const res = await (i % 2 ? second : first).http
        .put('/users/me/notification-schedule')
        .set('Authorization', user.auth)
        .send({ quietHours: null, digest: 'DAILY', digestAt: '17:00' });
      expect(res.status).toBe(200);
      users.push(user);
    }
    await createTask(first, cls.id, owner);
    await createTask(second, cls.id, owner);
    await waitFor(
      'every e-mail left for the digest',
      async () =>
        (
          await first.db.query(
            `SELECT 1 FROM notification_deliveries WHERE last_error = 'DIGEST' AND user_id = ANY($1)`,
            [users.map((user) => user.id)],
          )
        ).length === 16,
      20_000,
    );
    // 17:00:20 in Paris (summer time, UTC+2): the Paris users' digests; 15:00 in UTC: none yet for the others.
    clock.set('2026-06-01T15:00:20.000Z');
    const paris = users.filter((_, i) => i % 2);
    for (const user of paris) await smtp.waitFor(user.email, 20_000);
    // The instance that made them stops; a new one starts within the same minute.
    await second.close();
    apps.splice(apps.indexOf(second), 1);
    const third = await start();
    await sleep(3000);
    // 17:00:30 in UTC: the others', made by whichever instance ran first.
    clock.set('2026-06-01T17:00:30.000Z');
    for (const user of users.filter((_, i) => i % 2 === 0)) await smtp.waitFor(user.email, 20_000);
    await sleep(3000);
    for (const user of users) {
      const mails = smtp.messages.filter((mail) => mail.to.includes(user.email));
      expect(mails).toHaveLength(1);
      expect(mails[0].subject).toBe('Your daily digest for Mon 01 Jun 2026: 2 notifications');
    }
    const [{ digests }] = await third.db.query(
      `SELECT count(*)::int AS digests FROM notification_deliveries WHERE type = 'DIGEST'`,
    );
    expect(digests).toBe(users.length);
  });
});
