import { randomBytes } from 'node:crypto';
import { addMember, createClass } from '../utils/classes';
import { MovableClock } from '../utils/clock';
import { apiError } from '../utils/expect';
import { DeliveryJson, inbox, setPref, useAppWithChannelFakes, waitFor } from '../utils/notifications';
import { createTask } from '../utils/tasks';
import { createUser, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';

const BOT_TOKEN = '123456:TEST-bot-token_secret';

interface Schedule {
  quietHours: { start: string; end: string } | null;
  digest: 'OFF' | 'DAILY';
  digestAt: string;
}

/** A time of day for the jobs: they run every second and the worker polls every 100 ms. */
const SETTLE_MS = 2500;
/** How long a test waits for the jobs to do what it expects; generous, for a CI machine under load. */
const SETTLE_LIMIT_MS = 20_000;

describe('notification schedule: quiet hours and the daily digest', () => {
  jest.setTimeout(120_000);
  // Holds and digests depend on the time of day: the app goes by this clock, which each test sets.
  const clock = new MovableClock('2026-03-28T12:00:00.000Z');
  const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes(
    () => ({ TELEGRAM_BOT_TOKEN: BOT_TOKEN, DELIVERY_RETRY_BASE_SECONDS: '60' }),
    { clock },
  );

  const getSchedule = (user: TestUser) =>
    ctx.http.get('/users/me/notification-schedule').set('Authorization', user.auth);
  const putSchedule = (user: TestUser, body: object) =>
    ctx.http.put('/users/me/notification-schedule').set('Authorization', user.auth).send(body);

  const NONE: Schedule = { quietHours: null, digest: 'OFF', digestAt: '17:00' };
  const quiet = (start: string, end: string): Schedule => ({ ...NONE, quietHours: { start, end } });
  const daily = (digestAt: string): Schedule => ({ ...NONE, digest: 'DAILY', digestAt });

  async function schedule(user: TestUser, body: Schedule): Promise<void> {
    const res = await putSchedule(user, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(body);
  }

  async function deliveries(user: TestUser, query: Record<string, string> = {}): Promise<DeliveryJson[]> {
    const res = await ctx.http
      .get('/users/me/deliveries')
      .query({ limit: 100, ...query })
      .set('Authorization', user.auth);
    expect(res.status).toBe(200);
    return res.body.items as DeliveryJson[];
  }

  const ofChannel = async (user: TestUser, channel: string) =>
    (await deliveries(user)).filter((delivery) => delivery.channel === channel);

  /** Waits until the user's first e-mail delivery in the log is as `wanted` says. */
  const firstEmail = (user: TestUser, what: string, wanted: (delivery: DeliveryJson) => boolean) =>
    waitFor(
      what,
      async () => {
        const [first] = await ofChannel(user, 'EMAIL');
        return first !== undefined && wanted(first);
      },
      SETTLE_LIMIT_MS,
    );

  /** A member of a fresh class (EMAIL to the account, plus MESSENGER and a webhook) and its owner. */
  async function member(
    timezone: string,
  ): Promise<{ user: TestUser; owner: TestUser; classId: string; hook: string }> {
    const owner = await createUser(ctx);
    const user = await createUser(ctx, { timezone });
    const cls = await createClass(ctx, owner, { name: `Class ${randomBytes(3).toString('hex')}` });
    await addMember(ctx, cls.id, user);
    const hook = `/hook-${randomBytes(4).toString('hex')}`;
    const pref = await setPref(ctx, user, { channel: 'WEBHOOK', address: receiver.url(hook) });
    receiver.setSecret(hook, pref.secret!);
    await setPref(ctx, user, {
      channel: 'MESSENGER',
      address: `-${Date.now()}${Math.floor(Math.random() * 1e6)}`,
    });
    return { user, owner, classId: cls.id, hook };
  }

  const mailsTo = (user: TestUser) => smtp.messages.filter((mail) => mail.to.includes(user.email));

  async function messengerOf(user: TestUser): Promise<string> {
    const [pref] = await ctx.db.query<{ address: string }[]>(
      `SELECT address FROM notification_prefs WHERE user_id = $1 AND channel = 'MESSENGER'`,
      [user.id],
    );
    return pref.address;
  }

  describe('the API', () => {
    it('answers the defaults until one is saved, then what was saved; idempotent with a key', async () => {
      const user = await createUser(ctx);
      expect((await getSchedule(user)).body).toEqual({ quietHours: null, digest: 'OFF', digestAt: '17:00' });
      const body = { quietHours: { start: '22:00', end: '07:00' }, digest: 'DAILY', digestAt: '06:30' };
      const first = await putSchedule(user, body).set('Idempotency-Key', 'schedule-1');
      expect(first.status).toBe(200);
      expect(first.body).toEqual(body);
      const replay = await putSchedule(user, body).set('Idempotency-Key', 'schedule-1');
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const other = await putSchedule(user, { ...body, digest: 'OFF' }).set('Idempotency-Key', 'schedule-1');
      expect(other.status).toBe(422);
      expect((await getSchedule(user)).body).toEqual(body);
      await schedule(user, NONE);
      expect((await getSchedule(user)).body).toEqual({ quietHours: null, digest: 'OFF', digestAt: '17:00' });
    });

    it.each([
      ['quiet hours starting when they end', { start: '22:00', end: '22:00' }, 'DAILY', '17:00'],
      ['a one-digit hour', { start: '7:00', end: '08:00' }, 'OFF', '17:00'],
      ['hour 24', { start: '24:00', end: '08:00' }, 'OFF', '17:00'],
      ['seconds', { start: '22:00:00', end: '07:00' }, 'OFF', '17:00'],
      ['a digestAt not HH:MM', null, 'DAILY', '5pm'],
      ['an unknown digest', null, 'WEEKLY', '17:00'],
      ['quiet hours not an object', 'always', 'OFF', '17:00'],
      ['quiet hours without an end', { start: '22:00' }, 'OFF', '17:00'],
      ['an unknown field in the quiet hours', { start: '22:00', end: '07:00', days: 5 }, 'OFF', '17:00'],
    ])('answers 400 for %s', async (_case, quietHours, digest, digestAt) => {
      const user = await createUser(ctx);
      const res = await putSchedule(user, { quietHours, digest, digestAt });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      expect((await getSchedule(user)).body).toEqual({ quietHours: null, digest: 'OFF', digestAt: '17:00' });
    });

    it('answers 400 for a missing or unknown field, 401 without a token', async () => {
      const user = await createUser(ctx);
      for (const body of [
        { digest: 'OFF', digestAt: '17:00' },
        { quietHours: null, digestAt: '17:00' },
        { quietHours: null, digest: 'OFF' },
        { quietHours: null, digest: 'OFF', digestAt: '17:00', weekly: true },
      ]) {
        const res = await putSchedule(user, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      }
      expect((await ctx.http.get('/users/me/notification-schedule')).status).toBe(401);
      expect((await ctx.http.put('/users/me/notification-schedule').send({})).status).toBe(401);
    });
  });

  describe('quiet hours', () => {
    it.each([
      // Berlin, 25 October 2026: clocks go back from 03:00 to 02:00. 23:30 summer time, quiet until 07:00 winter time.
      ['2026-10-24T21:30:00Z', 'Europe/Berlin', '22:00', '07:00', '2026-10-25T06:00:00.000Z'],
      ['2026-10-24T19:59:00Z', 'Europe/Berlin', '22:00', '07:00', null],
      // After midnight, in a window spanning it.
      ['2026-10-25T01:30:00Z', 'Europe/Berlin', '22:00', '07:00', '2026-10-25T06:00:00.000Z'],
      // A window within the day: 08:00 and 09:00 in New York.
      ['2026-06-10T12:00:00Z', 'America/New_York', '09:00', '17:00', null],
      ['2026-06-10T13:00:00Z', 'America/New_York', '09:00', '17:00', '2026-06-10T21:00:00.000Z'],
      ['2026-06-10T21:00:00Z', 'America/New_York', '09:00', '17:00', null],
      // An end the spring change skips (02:30 in Berlin on 29 March 2026) is 03:30 summer time.
      ['2026-03-29T00:30:00Z', 'Europe/Berlin', '01:00', '02:30', '2026-03-29T01:30:00.000Z'],
      // A time zone PostgreSQL does not know counts as UTC rather than failing every user's delivery.
      ['2026-01-01T23:00:00Z', 'Mars/Olympus_Mons', '22:00', '07:00', '2026-01-02T07:00:00.000Z'],
    ])('at %s in %s, quiet %s-%s, wait until %s', async (at, tz, start, end, until) => {
      const [row] = await ctx.db.query<{ until: string | null }[]>(
        `SELECT to_char(notification_quiet_until($1, $2, $3, $4) AT TIME ZONE 'UTC',
                        'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS until`,
        [at, tz, start, end],
      );
      expect(row.until).toBe(until);
    });

    it('hold e-mail and messenger until the wall-clock end on the night clocks change; inbox and webhooks go at once', async () => {
      // Berlin, Sunday 29 March 2026: clocks go from 02:00 to 03:00. 00:30 on the wall is 23:30 UTC the day before.
      clock.set('2026-03-28T23:30:00.000Z');
      const { user, owner, classId, hook } = await member('Europe/Berlin');
      await schedule(user, quiet('22:00', '07:00'));
      const task = await createTask(ctx, classId, owner, { title: 'Night task' });

      await waitFor(
        'the webhook',
        async () => receiver.received.some((hit) => hit.path === hook),
        SETTLE_LIMIT_MS,
      );
      expect((await inbox(ctx, user)).items.map((item) => item.taskId)).toEqual([task.id]);
      await waitFor(
        'both held',
        async () =>
          (await deliveries(user)).filter((d) => d.channel !== 'WEBHOOK' && d.nextAttemptAt !== null)
            .length === 2,
        SETTLE_LIMIT_MS,
      );
      // 07:00 in Berlin that morning is summer time: 05:00 UTC, not 06:00.
      for (const channel of ['EMAIL', 'MESSENGER']) {
        expect(await ofChannel(user, channel)).toEqual([
          expect.objectContaining({
            status: 'PENDING',
            attempts: 0,
            nextAttemptAt: '2026-03-29T05:00:00.000Z',
          }),
        ]);
      }
      clock.set('2026-03-29T04:59:00.000Z');
      await sleep(SETTLE_MS);
      expect(mailsTo(user)).toHaveLength(0);
      const chat = await messengerOf(user);
      expect(telegram.messages.filter((message) => message.chatId === chat)).toHaveLength(0);

      clock.set('2026-03-29T05:00:01.000Z');
      const mail = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(mail.subject).toContain('Night task');
      await waitFor(
        'the message',
        async () => telegram.messages.some((message) => message.chatId === chat),
        SETTLE_LIMIT_MS,
      );
      await waitFor(
        'both sent',
        async () => (await deliveries(user)).every((d) => d.status === 'SENT' && d.attempts === 1),
        SETTLE_LIMIT_MS,
      );
    });

    it('hold within a window of the same day and follow a schedule changed while they wait', async () => {
      // 13:30 in New York (EDT, UTC-4).
      clock.set('2026-06-10T17:30:00.000Z');
      const { user, owner, classId } = await member('America/New_York');
      await schedule(user, quiet('13:00', '15:00'));
      await createTask(ctx, classId, owner);
      const heldUntil = async (until: string) =>
        waitFor(
          `held until ${until}`,
          async () => {
            const held = (await deliveries(user)).filter((d) => d.channel !== 'WEBHOOK');
            return (
              held.length === 2 && held.every((d) => d.status === 'PENDING' && d.nextAttemptAt === until)
            );
          },
          SETTLE_LIMIT_MS,
        );
      await heldUntil('2026-06-10T19:00:00.000Z');
      // Shorter: they wait for the new end, shown at once.
      await schedule(user, quiet('12:00', '14:00'));
      await heldUntil('2026-06-10T18:00:00.000Z');
      // Later, spanning midnight: 13:30 is still quiet, until 08:00 the next morning.
      await schedule(user, quiet('13:00', '08:00'));
      await heldUntil('2026-06-11T12:00:00.000Z');
      expect(mailsTo(user)).toHaveLength(0);
      // None: they go out now.
      await schedule(user, NONE);
      await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      await waitFor(
        'both sent',
        async () => (await deliveries(user)).every((d) => d.status === 'SENT'),
        SETTLE_LIMIT_MS,
      );
    });

    it('follow a time zone changed on the profile while they wait', async () => {
      // 23:00 in London (UTC in winter), quiet 22:00-07:00.
      clock.set('2026-01-15T23:00:00.000Z');
      const { user, owner, classId } = await member('Europe/London');
      await schedule(user, quiet('22:00', '07:00'));
      await createTask(ctx, classId, owner);
      await firstEmail(user, 'held', (d) => d.nextAttemptAt === '2026-01-16T07:00:00.000Z');
      // In Tokyo it is 08:00 the next morning: no longer quiet, so the scheduler's next run lets it go.
      const res = await ctx.http
        .patch('/users/me')
        .set('Authorization', user.auth)
        .send({ timezone: 'Asia/Tokyo' });
      expect(res.status).toBe(200);
      await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
    });

    it('hold a retry that falls in them, with its attempts and error kept, and back-off as before after them', async () => {
      clock.set('2026-02-02T21:59:00.000Z');
      const { user, owner, classId } = await member('UTC');
      await setPref(ctx, user, { channel: 'MESSENGER', address: await messengerOf(user), isEnabled: false });
      await schedule(user, quiet('22:00', '07:00'));
      smtp.rejectRecipients.add(user.email);
      try {
        await createTask(ctx, classId, owner);
        // Refused once before the quiet hours: retried 60 s later, at 22:00, inside them.
        await waitFor(
          'the first attempt failed',
          async () => Boolean((await ofChannel(user, 'EMAIL'))[0]?.lastError),
          SETTLE_LIMIT_MS,
        );
        const [failed] = await ofChannel(user, 'EMAIL');
        expect(failed).toMatchObject({ status: 'PENDING', nextAttemptAt: '2026-02-02T22:00:00.000Z' });
        expect(failed.lastError).toEqual(expect.any(String));
        clock.set('2026-02-02T22:00:30.000Z');
        await firstEmail(user, 'held', (d) => d.nextAttemptAt === '2026-02-03T07:00:00.000Z');
        expect((await ofChannel(user, 'EMAIL'))[0]).toMatchObject({
          attempts: 1,
          lastError: failed.lastError,
        });
        // After them: attempt 2 fails again, and waits 120 s (60 × 2) as it would have.
        clock.set('2026-02-03T07:00:10.000Z');
        await firstEmail(
          user,
          'the second attempt failed',
          (d) => d.nextAttemptAt === '2026-02-03T07:02:10.000Z',
        );
        expect((await ofChannel(user, 'EMAIL'))[0]).toMatchObject({
          status: 'PENDING',
          nextAttemptAt: '2026-02-03T07:02:10.000Z',
        });
      } finally {
        smtp.rejectRecipients.delete(user.email);
      }
      clock.set('2026-02-03T07:02:20.000Z');
      await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      await waitFor(
        'sent',
        async () => (await ofChannel(user, 'EMAIL'))[0]?.status === 'SENT',
        SETTLE_LIMIT_MS,
      );
      expect((await ofChannel(user, 'EMAIL'))[0].attempts).toBe(3);
    });

    it('skip what became out of date while held, as ever', async () => {
      clock.set('2026-02-05T23:00:00.000Z');
      const { user, owner, classId } = await member('UTC');
      await schedule(user, quiet('22:00', '07:00'));
      await createTask(ctx, classId, owner);
      await firstEmail(user, 'held', (d) => d.nextAttemptAt === '2026-02-06T07:00:00.000Z');
      // Deleting the task would delete its notifications and their deliveries: the member leaves instead.
      await ctx.db.query(`DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`, [
        classId,
        user.id,
      ]);
      clock.set('2026-02-06T07:00:05.000Z');
      await waitFor(
        'skipped',
        async () => (await deliveries(user)).filter((d) => d.status === 'SKIPPED').length === 2,
        SETTLE_LIMIT_MS,
      );
      for (const channel of ['EMAIL', 'MESSENGER']) {
        expect((await ofChannel(user, channel))[0]).toMatchObject({
          attempts: 0,
          lastError: 'not sent: the recipient left the class',
        });
      }
      expect(mailsTo(user)).toHaveLength(0);
    });

    it('never hold a test event or a redelivery the user asks for', async () => {
      clock.set('2026-02-07T23:00:00.000Z');
      const { user } = await member('UTC');
      await schedule(user, quiet('22:00', '07:00'));
      const res = await ctx.http
        .post('/users/me/notification-prefs/EMAIL/test')
        .set('Authorization', user.auth);
      expect(res.status).toBe(202);
      const mail = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(mail.subject).toBe('Test notification');
    });
  });

  describe('the daily digest', () => {
    it('lists every notification since the previous one in one e-mail at digestAt, once per local day', async () => {
      // 09:00 in Shanghai (UTC+8).
      clock.set('2026-04-01T01:00:00.000Z');
      const { user, owner, classId, hook } = await member('Asia/Shanghai');
      await setPref(ctx, user, { channel: 'MESSENGER', address: await messengerOf(user), isEnabled: false });
      await schedule(user, daily('18:00'));
      const tasks = [];
      // One after another: the digest lists in the inbox's order, and tasks announced by one statement share a time.
      for (const title of ['First <b>task</b>', 'Second task', 'Third task']) {
        tasks.push(await createTask(ctx, classId, owner, { title, dueAt: '2026-04-03T10:00:00.000Z' }));
        await waitFor(
          'its e-mail left for the digest',
          async () => (await ofChannel(user, 'EMAIL')).length === tasks.length,
          SETTLE_LIMIT_MS,
        );
      }
      await waitFor(
        'every e-mail left for the digest',
        async () => {
          const mails = await ofChannel(user, 'EMAIL');
          return mails.length === 3 && mails.every((d) => d.status === 'SKIPPED' && d.lastError === 'DIGEST');
        },
        SETTLE_LIMIT_MS,
      );
      // Webhooks are not part of the digest.
      await waitFor(
        'the webhooks',
        async () => receiver.received.filter((hit) => hit.path === hook).length === 3,
        SETTLE_LIMIT_MS,
      );
      clock.set('2026-04-01T09:59:00.000Z');
      await sleep(SETTLE_MS);
      expect(mailsTo(user)).toHaveLength(0);

      // 18:00:10 in Shanghai.
      clock.set('2026-04-01T10:00:10.000Z');
      const mail = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(mail.subject).toBe('Your daily digest for Wed 01 Apr 2026: 3 notifications');
      const positions = tasks.map((task) => mail.text.indexOf(`http://app.test/tasks/${task.id}`));
      expect(positions.every((position) => position > 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      expect(mail.text).toContain('New task in');
      expect(mail.text).toContain('First <b>task</b>');
      // Times in the user's time zone: the due time 10:00 UTC is 18:00 in Shanghai.
      expect(mail.text).toContain('Fri 03 Apr 2026 18:00 (Asia/Shanghai)');
      expect(mail.text).toContain('(Asia/Shanghai)');
      expect(mail.html).toContain('First &lt;b&gt;task&lt;/b&gt;');
      expect(mail.html).toContain(`href="http://app.test/tasks/${tasks[2].id}"`);

      // The worker records the success after the SMTP server has the mail.
      await waitFor(
        'the digest recorded as sent',
        async () => (await deliveries(user, { channel: 'EMAIL', status: 'SENT' })).length === 1,
        SETTLE_LIMIT_MS,
      );
      const [digest] = await deliveries(user, { channel: 'EMAIL', status: 'SENT' });
      expect(digest).toMatchObject({
        type: 'DIGEST',
        notificationId: null,
        address: user.email,
        attempts: 1,
      });
      // Redeliverable: the same list again.
      const again = await ctx.http
        .post(`/users/me/deliveries/${digest.id}/redeliver`)
        .set('Authorization', user.auth);
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ type: 'DIGEST', status: 'PENDING', notificationId: null });
      const copy = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(copy.text).toBe(mail.text);

      // digestAt moved later the same day: no second digest today; what came since waits for tomorrow's.
      await schedule(user, daily('20:00'));
      const later = await createTask(ctx, classId, owner, { title: 'Evening task' });
      clock.set('2026-04-01T12:00:30.000Z');
      await sleep(SETTLE_MS);
      expect(mailsTo(user)).toHaveLength(2);
      clock.set('2026-04-02T12:00:30.000Z');
      const next = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(next.subject).toBe('Your daily digest for Thu 02 Apr 2026: 1 notification');
      expect(next.text).toContain(`http://app.test/tasks/${later.id}`);
      expect(next.text).not.toContain(tasks[0].id);
    });

    it('sends none when there is nothing to list, and not later that day when something comes', async () => {
      clock.set('2026-04-05T16:30:00.000Z');
      const { user, owner, classId } = await member('UTC');
      await schedule(user, daily('17:00'));
      clock.set('2026-04-05T17:00:05.000Z');
      await waitFor(
        "the day's moment handled",
        async () =>
          (
            await ctx.db.query(`SELECT delivery_id FROM notification_digest_days WHERE user_id = $1`, [
              user.id,
            ])
          ).length === 1,
        SETTLE_LIMIT_MS,
      );
      await createTask(ctx, classId, owner);
      clock.set('2026-04-05T18:00:00.000Z');
      await sleep(SETTLE_MS);
      expect(mailsTo(user)).toHaveLength(0);
      expect((await deliveries(user, { channel: 'EMAIL' })).map((d) => d.type)).toEqual(['TASK_PUBLISHED']);
    });

    it('waits for the end of quiet hours when its moment falls in them', async () => {
      clock.set('2026-04-07T20:00:00.000Z');
      const { user, owner, classId } = await member('UTC');
      await schedule(user, {
        quietHours: { start: '22:00', end: '07:00' },
        digest: 'DAILY',
        digestAt: '23:00',
      });
      await createTask(ctx, classId, owner);
      await firstEmail(user, 'left for the digest', (d) => d.lastError === 'DIGEST');
      clock.set('2026-04-07T23:00:05.000Z');
      await waitFor(
        'the digest, held',
        async () =>
          (await deliveries(user, { channel: 'EMAIL', status: 'PENDING' })).some(
            (d) => d.type === 'DIGEST' && d.nextAttemptAt === '2026-04-08T07:00:00.000Z',
          ),
        SETTLE_LIMIT_MS,
      );
      expect(mailsTo(user)).toHaveLength(0);
      clock.set('2026-04-08T07:00:05.000Z');
      const mail = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(mail.subject).toBe('Your daily digest for Tue 07 Apr 2026: 1 notification');
    });

    it('switched off, leaves what waited in the inbox only, also when switched on again', async () => {
      clock.set('2026-04-10T08:00:00.000Z');
      const { user, owner, classId } = await member('UTC');
      await schedule(user, daily('17:00'));
      const waited = await createTask(ctx, classId, owner, { title: 'Waited for the digest' });
      await firstEmail(user, 'left for the digest', (d) => d.lastError === 'DIGEST');
      await schedule(user, NONE);
      // Now e-mails go one by one again.
      const single = await createTask(ctx, classId, owner, { title: 'After the switch' });
      const mail = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(mail.subject).toContain('After the switch');
      await schedule(user, daily('17:00'));
      clock.set('2026-04-10T17:00:05.000Z');
      await sleep(SETTLE_MS);
      expect(mailsTo(user)).toHaveLength(1);
      expect((await inbox(ctx, user)).items.map((item) => item.taskId)).toEqual([single.id, waited.id]);
    });

    it('takes in an e-mail that waited for quiet hours when the digest is switched on meanwhile', async () => {
      clock.set('2026-04-12T23:00:00.000Z');
      const { user, owner, classId } = await member('UTC');
      await schedule(user, quiet('22:00', '07:00'));
      const task = await createTask(ctx, classId, owner);
      await firstEmail(user, 'held', (d) => d.nextAttemptAt === '2026-04-13T07:00:00.000Z');
      await schedule(user, daily('17:00'));
      await firstEmail(user, 'left for the digest', (d) => d.lastError === 'DIGEST');
      clock.set('2026-04-13T17:00:05.000Z');
      const mail = await smtp.waitFor(user.email, SETTLE_LIMIT_MS);
      expect(mail.text).toContain(`http://app.test/tasks/${task.id}`);
    });
  });
});
