import { addMember, createClass } from '../utils/classes';
import { MovableClock } from '../utils/clock';
import { setPref, useAppWithChannelFakes, waitFor } from '../utils/notifications';
import { createUser, TestUser } from '../utils/users';
import { ANNOUNCEMENTS } from './announcements/announcements.extension';

interface Delivery {
  type: string;
  channel: string;
  status: string;
  lastError: string | null;
  nextAttemptAt: string | null;
}

/** An extension's notification type meets quiet hours and the digest exactly as a core one. */
describe('example extension: announcements under quiet hours and the daily digest', () => {
  jest.setTimeout(60_000);
  const clock = new MovableClock('2026-05-04T23:00:00.000Z');
  const { ctx, smtp } = useAppWithChannelFakes(() => ({}), { extensions: [ANNOUNCEMENTS], clock });

  async function room(): Promise<{ owner: TestUser; user: TestUser; classId: string }> {
    const owner = await createUser(ctx);
    const user = await createUser(ctx, { timezone: 'UTC' });
    const cls = await createClass(ctx, owner, { name: 'Geography' });
    await addMember(ctx, cls.id, user);
    return { owner, user, classId: cls.id };
  }

  async function announce(classId: string, owner: TestUser, title: string): Promise<string> {
    const res = await ctx.http
      .post(`/classes/${classId}/announcements`)
      .set('Authorization', owner.auth)
      .send({ title, body: `About ${title}` });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  const schedule = async (user: TestUser, body: object) =>
    expect(
      (await ctx.http.put('/users/me/notification-schedule').set('Authorization', user.auth).send(body))
        .status,
    ).toBe(200);

  async function emails(user: TestUser): Promise<Delivery[]> {
    const res = await ctx.http
      .get('/users/me/deliveries')
      .query({ channel: 'EMAIL' })
      .set('Authorization', user.auth);
    return res.body.items as Delivery[];
  }

  it('holds an announcement e-mail during quiet hours', async () => {
    clock.set('2026-05-04T23:00:00.000Z');
    const { owner, user, classId } = await room();
    await schedule(user, { quietHours: { start: '22:00', end: '06:30' }, digest: 'OFF', digestAt: '17:00' });
    await announce(classId, owner, 'Field trip');
    await waitFor(
      'held',
      async () =>
        (await emails(user)).some(
          (d) =>
            d.type === 'ANNOUNCEMENT_POSTED' &&
            d.status === 'PENDING' &&
            d.nextAttemptAt === '2026-05-05T06:30:00.000Z',
        ),
      10_000,
    );
    clock.set('2026-05-05T06:30:01.000Z');
    const mail = await smtp.waitFor(user.email, 10_000);
    expect(mail.subject).toBe('Announcement in Geography: Field trip');
  });

  it('lists announcements in the digest, each linking to its notification', async () => {
    clock.set('2026-05-06T08:00:00.000Z');
    const { owner, user, classId } = await room();
    await setPref(ctx, user, { channel: 'EMAIL', address: user.email });
    await schedule(user, { quietHours: null, digest: 'DAILY', digestAt: '17:00' });
    await announce(classId, owner, 'Exam moved');
    await announce(classId, owner, 'New room');
    await waitFor(
      'left for the digest',
      async () =>
        (await emails(user)).filter((d) => d.status === 'SKIPPED' && d.lastError === 'DIGEST').length === 2,
      10_000,
    );
    clock.set('2026-05-06T17:00:05.000Z');
    const mail = await smtp.waitFor(user.email, 10_000);
    expect(mail.subject).toBe('Your daily digest for Wed 06 May 2026: 2 notifications');
    const notifications = await ctx.db.query<{ id: string }[]>(
      `SELECT id FROM notifications WHERE user_id = $1 AND type = 'ANNOUNCEMENT_POSTED' ORDER BY created_at, id`,
      [user.id],
    );
    const links = notifications.map(({ id }) => mail.text.indexOf(`http://app.test/notifications/${id}`));
    expect(links.every((at) => at > 0)).toBe(true);
    expect(links[0]).toBeLessThan(links[1]);
    expect(mail.text.indexOf('Exam moved')).toBeLessThan(mail.text.indexOf('New room'));
    expect(mail.text).toContain('About Exam moved');
    // The mail reaches SMTP before the worker records its success.
    await waitFor(
      'the digest recorded as sent',
      async () => (await emails(user))[0]?.status === 'SENT',
      10_000,
    );
    expect((await emails(user))[0]).toMatchObject({ type: 'DIGEST', status: 'SENT' });
  });
});
