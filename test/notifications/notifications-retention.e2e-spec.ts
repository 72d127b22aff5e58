import { Client } from 'pg';
import { DeliveryRetention } from '../../src/notifications/delivery/delivery-retention';
import { createClass } from '../utils/classes';
import { waitForLockWaiters } from '../utils/database';
import { createSharedDatabase } from '../utils/notifications';
import { createTestApp, useTestApp } from '../utils/test-app';
import { createUser } from '../utils/users';

describe('notifications: retention of finished deliveries', () => {
  const ctx = useTestApp({ DELIVERY_RETENTION_DAYS: '7' });

  /** A delivery row as the outbox keeps it; pending ones wait far ahead so the worker leaves them alone. */
  const insertDelivery = async (fields: {
    notificationId?: string;
    channel?: string;
    status: 'PENDING' | 'SENT' | 'FAILED' | 'SKIPPED';
    ageDays: number;
  }): Promise<string> => {
    const [row] = await ctx.db.query(
      `INSERT INTO notification_deliveries (notification_id, user_id, type, channel, address, payload, status,
                                            next_attempt_at, updated_at)
       SELECT $1, n.user_id, n.type, $2, 'someone@example.com', $3, $4, now() + interval '1 year',
              now() - make_interval(days => $5)
         FROM (SELECT) one LEFT JOIN notifications n ON n.id = $1
       RETURNING id`,
      [
        fields.notificationId ?? null,
        fields.channel ?? 'EMAIL',
        fields.notificationId ? null : { subject: 'Reset your password', text: 'https://app.test/reset?t=x' },
        fields.status,
        fields.ageDays,
      ],
    );
    return row.id;
  };

  /** A published-task or reminder notification of the owner's task (the reminder names its due time). */
  const insertNotification = async (
    owner: { id: string },
    task: { id: string; classId: string },
    reminder: boolean,
  ): Promise<string> => {
    const [row] = await ctx.db.query(
      `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, title, content, status,
                                  hours_before, due_at)
       VALUES ($1, $2, $3, $4, 'Task', 'Class', 'Title', 'Content', 'SENT', $5, $6) RETURNING id`,
      [
        owner.id,
        reminder ? 'TASK_DUE_REMINDER' : 'TASK_PUBLISHED',
        task.id,
        task.classId,
        reminder ? 24 : null,
        reminder ? new Date() : null,
      ],
    );
    return row.id;
  };

  it('deletes sent account e-mails at once and other finished deliveries after DELIVERY_RETENTION_DAYS', async () => {
    const owner = await createUser(ctx);
    const cls = await createClass(ctx, owner);
    // A draft: no notification job produces anything for it meanwhile.
    const [task] = await ctx.db.query(
      `INSERT INTO tasks (class_id, title, created_by) VALUES ($1, 'Draft', $2) RETURNING id, class_id AS "classId"`,
      [cls.id, owner.id],
    );
    const first = await insertNotification(owner, task, false);
    const second = await insertNotification(owner, task, true);
    const kept = [
      await insertDelivery({ status: 'PENDING', ageDays: 30 }),
      await insertDelivery({ status: 'FAILED', ageDays: 1 }),
      await insertDelivery({ notificationId: first, channel: 'EMAIL', status: 'SENT', ageDays: 6 }),
      await insertDelivery({ notificationId: first, channel: 'WEBHOOK', status: 'PENDING', ageDays: 30 }),
      await insertDelivery({ notificationId: first, channel: 'MESSENGER', status: 'FAILED', ageDays: 6 }),
    ];
    // Due for deletion:
    await Promise.all([
      insertDelivery({ status: 'SENT', ageDays: 0 }),
      insertDelivery({ status: 'FAILED', ageDays: 8 }),
      insertDelivery({ notificationId: second, channel: 'EMAIL', status: 'SENT', ageDays: 8 }),
      insertDelivery({ notificationId: second, channel: 'WEBHOOK', status: 'FAILED', ageDays: 8 }),
      insertDelivery({ notificationId: second, channel: 'MESSENGER', status: 'SKIPPED', ageDays: 8 }),
    ]);

    await ctx.app.get(DeliveryRetention).purgeFinished();

    const remaining = (await ctx.db.query(`SELECT id FROM notification_deliveries`)).map(
      (row: { id: string }) => row.id,
    );
    expect(remaining.sort()).toEqual(kept.sort());
    // The inbox is the users' and stays.
    expect(await ctx.db.query(`SELECT count(*)::int AS n FROM notifications`)).toEqual([{ n: 2 }]);
  });
});

describe('notifications: retention at shutdown', () => {
  it('lets a run in progress finish before the database pool closes, and starts none after', async () => {
    // A database of the test's own: it outlives the application, whose shutdown is under test.
    const database = await createSharedDatabase();
    const ctx = await createTestApp({ DELIVERY_RETENTION_DAYS: '7' }, { databaseUrl: database.url });
    const insertFinished = (status: string, ageDays: number) =>
      ctx.db.query(
        `INSERT INTO notification_deliveries (channel, address, payload, status, updated_at)
         VALUES ('EMAIL', 'someone@example.com', $1, $2, now() - make_interval(days => $3))`,
        [{ subject: 'Reset your password', text: 'https://app.test/reset?t=x' }, status, ageDays],
      );
    await insertFinished('SENT', 0);
    await insertFinished('FAILED', 8);
    const locker = new Client({ connectionString: database.url });
    await locker.connect();
    try {
      // The run waits on this lock, so it is in progress when the application closes.
      await locker.query(`BEGIN; LOCK TABLE notification_deliveries IN SHARE MODE`);
      const retention = ctx.app.get(DeliveryRetention);
      const run = retention.purgeFinished();
      await waitForLockWaiters(ctx.db, 1);
      let closed = false;
      const closing = ctx.close().then(() => (closed = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(closed).toBe(false);
      await locker.query('COMMIT');
      await Promise.all([run, closing]);
      const remaining = await locker.query(`SELECT status FROM notification_deliveries`);
      expect(remaining.rows).toEqual([]);
      // Shutting down: a tick now does nothing (the pool is closed, it would only fail).
      await expect(retention.purgeFinished()).resolves.toBeUndefined();
    } finally {
      await locker.end();
      await database.drop();
    }
  });
});
