import { DataSource } from 'typeorm';
import { createTestDataSource, seedClass, TestDataSource } from '../../test/utils/test-data-source';
import { DeliveriesRepository } from './delivery/deliveries.repository';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { NotificationsRepository } from './notifications.repository';
import { Notifier } from './production/notifier';

describe('NotificationsRepository and DeliveriesRepository (real PostgreSQL)', () => {
  let source: TestDataSource;
  let db: DataSource;
  let notifications: NotificationsRepository;
  let deliveries: DeliveriesRepository;
  let userId: string;

  beforeAll(async () => {
    source = await createTestDataSource();
    db = source.db;
    notifications = new NotificationsRepository(db, new Notifier(source.config));
    deliveries = new DeliveriesRepository(db);
    let classId: string;
    ({ ownerId: userId, classId } = await seedClass(db, 'inbox@example.test'));
    await db.query(
      `INSERT INTO tasks (class_id, title, is_published, published_at, created_by) VALUES ($1, 'Read', true, now(), $2)`,
      [classId, userId],
    );
  });

  afterAll(() => source.close());

  it('announces a published task, routes it to the inbox, and marks it read once', async () => {
    expect(await notifications.publishBatch('all')).toEqual({ tasks: 1, notifications: 1 });
    expect(await notifications.publishBatch('all')).toEqual({ tasks: 0, notifications: 0 });
    expect(await notifications.dispatchBatch(new Date())).toEqual({ notifications: 1, deliveries: 1 });
    expect(await notifications.unreadCount(userId)).toBe(1);
    const [first] = await notifications.inboxPage(userId, undefined, false, 10);
    expect(first).toMatchObject({ type: 'TASK_PUBLISHED', unread_count: 1, readAt: null });
    expect(await notifications.markRead(db, userId, first.id.toUpperCase())).toBe(first.id);
    expect(await notifications.markRead(db, userId, '00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await notifications.markAllRead(db, userId)).toBe(0);
  });

  it('keeps one preference per channel, with the secret of its creation', async () => {
    const webhook = {
      channel: NotificationChannelName.WEBHOOK,
      address: 'https://a.test/',
      isEnabled: true,
      id: null,
    };
    const created = await notifications.upsertPref(db, userId, { ...webhook, secret: 'whsec_first' });
    const updated = await notifications.upsertPref(db, userId, {
      ...webhook,
      isEnabled: false,
      secret: 'whsec_second',
    });
    expect(updated).toMatchObject({ id: created.id, isEnabled: false, secret: 'whsec_first' });
    const defaultEmailId = '00000000-0000-5000-8000-000000000001';
    expect(await notifications.listPrefs(userId, defaultEmailId)).toEqual([
      { id: defaultEmailId, channel: 'EMAIL', address: expect.any(String), isEnabled: true, secret: null },
      expect.objectContaining({ id: created.id, channel: 'WEBHOOK' }),
    ]);
    expect(await notifications.deletePref(userId, created.id)).toBe(true);
    expect(await notifications.deletePref(userId, created.id)).toBe(false);
  });

  it('claims a queued mail once, records its success, and deletes it as a sent account mail', async () => {
    await deliveries.enqueueMail(db, 'to@example.test', { subject: 's', sealed: 'sealed.v1.x' }, new Date());
    const claimed = await deliveries.claim(NotificationChannelName.EMAIL, 10, new Date());
    const mail = claimed.find((row) => row.address === 'to@example.test')!;
    expect(mail).toMatchObject({ attempts: 1, payload: { subject: 's' }, out_of_date: null });
    expect(
      (await deliveries.claim(NotificationChannelName.EMAIL, 10, new Date())).map((row) => row.id),
    ).not.toContain(mail.id);
    await deliveries.succeed(mail.id, mail.attempts);
    expect(await deliveries.deleteSentAccountMails(100)).toBe(1);
  });
});
