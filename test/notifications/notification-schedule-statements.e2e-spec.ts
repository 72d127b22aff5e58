import { DeliveryOutbox } from '../../src/notifications/delivery/delivery-outbox';
import { NotificationDispatcher } from '../../src/notifications/delivery/notification-dispatcher';
import { NotificationChannelName } from '../../src/notifications/entities/notification-pref.entity';
import { NotificationScheduleService } from '../../src/notifications/notification-schedule.service';
import { NotificationProducer } from '../../src/notifications/production/notification-producer';
import { addMember, createClass } from '../utils/classes';
import { IDLE_JOBS } from '../utils/notifications';
import { statementsDuring } from '../utils/query-counter';
import { createTask } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

/** Statement counts of the work quiet hours and digests add to, with the jobs idle and called directly. */
describe('notification schedules: statements', () => {
  const ctx = useTestApp(IDLE_JOBS);

  /** Users in one class, each with `schedule` when given; one task announced to them and routed. */
  async function routedTo(count: number, schedule?: object): Promise<TestUser[]> {
    const owner = await createUser(ctx);
    const cls = await createClass(ctx, owner);
    const users: TestUser[] = [];
    for (let i = 0; i < count; i += 1) {
      const user = await createUser(ctx);
      await addMember(ctx, cls.id, user);
      if (schedule) {
        const res = await ctx.http
          .put('/users/me/notification-schedule')
          .set('Authorization', user.auth)
          .send(schedule);
        expect(res.status).toBe(200);
      }
      users.push(user);
    }
    await createTask(ctx, cls.id, owner);
    await ctx.app.get(NotificationProducer).publishDue('all');
    return users;
  }

  it('route and claim the deliveries of a user without a schedule in one statement each, as before', async () => {
    await routedTo(1);
    const routing = await statementsDuring(() => ctx.app.get(NotificationDispatcher).dispatchPending());
    expect(routing).toHaveLength(1);
    const claiming = await statementsDuring(() =>
      ctx.app.get(DeliveryOutbox).claim(NotificationChannelName.EMAIL, 10),
    );
    expect(claiming).toHaveLength(1);
  });

  it('make the digests of one user and of ten with the same statements: no loop over users', async () => {
    const daily = { quietHours: null, digest: 'DAILY', digestAt: '00:00' };
    const service = ctx.app.get(NotificationScheduleService);
    const digests = async () =>
      (
        await ctx.db.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM notification_deliveries WHERE type = 'DIGEST'`,
        )
      )[0].n;

    await routedTo(1, daily);
    await ctx.app.get(NotificationDispatcher).dispatchPending();
    const forOne = await statementsDuring(() => service.applyDue());
    expect(await digests()).toBe(1);

    await routedTo(10, daily);
    await ctx.app.get(NotificationDispatcher).dispatchPending();
    const forTen = await statementsDuring(() => service.applyDue());
    expect(await digests()).toBe(11);
    expect(forTen).toEqual(forOne);
  });
});
