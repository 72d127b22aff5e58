import { DeliveriesRepository } from '../../src/notifications/delivery/deliveries.repository';
import { NotificationChannelName } from '../../src/notifications/entities/notification-pref.entity';
import { NotificationsRepository } from '../../src/notifications/notifications.repository';
import { NotificationProducer } from '../../src/notifications/production/notification-producer';
import { TaskExtensionsRepository } from '../../src/tasks/task-extensions.repository';
import { addMember, createClass } from '../utils/classes';
import { createSharedDatabase, IDLE_JOBS, notificationsOfTask } from '../utils/notifications';
import { statementsDuring } from '../utils/query-counter';
import { seedMembers, seedTask } from '../utils/submissions';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

const MEMBERS = 10_000;

interface ReminderRow {
  user_id: string;
  hours_before: number;
  due_at: Date;
}

/**
 * TASK_DUE_REMINDER with extensions: a member with a later deadline of their own is reminded
 * at it (myDueAt − h) and not at the class-wide one; still once per (task, member, h, deadline) with two
 * instances, and with a statement count that does not grow with the members.
 */
describe('reminders at the members’ own deadlines', () => {
  let database: { url: string; drop(): Promise<void> };
  let first: TestApp;
  let second: TestApp;
  let owner: TestUser;
  /** The class of 10,000 members. */
  let classId: string;

  beforeAll(async () => {
    database = await createSharedDatabase();
    // The jobs stay idle: the test runs the producer of each instance itself.
    const env = { ...IDLE_JOBS, REMINDER_HOURS_BEFORE_DUE: '24,1' };
    [first, second] = await Promise.all([
      createTestApp(env, { databaseUrl: database.url }),
      createTestApp(env, { databaseUrl: database.url }),
    ]);
    owner = await createUser(first);
    ({ id: classId } = await createClass(first, owner));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await database?.drop();
  });

  /**
   * A published task of class `inClass` due `offset` from the database clock, already announced (only an
   * announced task is reminded of).
   */
  async function taskDueIn(
    app: TestApp,
    inClass: string,
    offset: string,
  ): Promise<{ taskId: string; dueAt: Date }> {
    const taskId = await seedTask(app, inClass);
    const [row] = await app.db.query(
      `WITH moved AS (
         UPDATE tasks SET due_at = date_trunc('second', now()) + $2::interval WHERE id = $1 RETURNING due_at),
       announced AS (INSERT INTO notification_task_publications (task_id) VALUES ($1))
       SELECT due_at FROM moved`,
      [taskId, offset],
    );
    return { taskId, dueAt: row.due_at };
  }

  /** Extensions of `userIds` to the task's dueAt moved by `shift`, written as the API stores them. */
  async function extend(app: TestApp, taskId: string, userIds: string[], shift: string): Promise<Date> {
    const [row] = await app.db.query(
      `INSERT INTO task_extensions (task_id, user_id, class_id, due_at)
       SELECT t.id, u.id, t.class_id, t.due_at + $3::interval FROM tasks t, unnest($2::uuid[]) AS u(id)
        WHERE t.id = $1
       RETURNING due_at`,
      [taskId, userIds, shift],
    );
    return row.due_at;
  }

  const remindersOf = (app: TestApp, taskId: string): Promise<ReminderRow[]> =>
    app.db.query(
      `SELECT user_id, hours_before, due_at FROM notifications WHERE task_id = $1 AND type = 'TASK_DUE_REMINDER'`,
      [taskId],
    );

  it('reminds each member once, at their own deadline, with two instances racing and a fixed number of statements', async () => {
    const members = await seedMembers(first, classId, MEMBERS, 'remind');
    // Due in 30 min: the 1 h moment has come for the class-wide deadline.
    const { taskId, dueAt } = await taskDueIn(first, classId, '30 minutes');
    // Own deadline 4.5 h later (due in 5 h): only the 24 h moment has come.
    const soon = members.slice(0, 300);
    const soonDue = await extend(first, taskId, soon, '4 hours 30 minutes');
    // Own deadline two days later: nothing yet.
    const far = members.slice(300, 500);
    await extend(first, taskId, far, '2 days');
    // Extensions the task's dueAt has overtaken (moved later since): the class-wide deadline is theirs.
    const overtaken = members.slice(500, 600);
    await extend(first, taskId, overtaken, '-10 minutes');
    const submitted = [...members.slice(600, 1600), ...soon.slice(0, 50)];
    await first.db.query(
      `INSERT INTO submissions (task_id, user_id) SELECT $1, id FROM unnest($2::uuid[]) AS id`,
      [taskId, submitted],
    );

    const producers = [first, second].map((app) => app.app.get(NotificationProducer));
    const statements = await statementsDuring(() =>
      Promise.all(producers.map((producer) => producer.remindDue())),
    );

    const reminders = await remindersOf(first, taskId);
    const byUser = new Map<string, ReminderRow[]>();
    for (const row of reminders) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row]);
    const classWide = MEMBERS + 1 - soon.length - far.length - (submitted.length - 50);
    expect(reminders).toHaveLength(classWide + soon.length - 50);
    expect([...byUser.values()].every((rows) => rows.length === 1)).toBe(true);

    for (const id of soon.slice(50)) {
      expect(byUser.get(id)).toEqual([{ user_id: id, hours_before: 24, due_at: soonDue }]);
    }
    for (const id of [...far, ...submitted]) expect(byUser.has(id)).toBe(false);
    for (const id of [...overtaken, ...members.slice(1600, 1700)]) {
      expect(byUser.get(id)).toEqual([{ user_id: id, hours_before: 1, due_at: dueAt }]);
    }

    // Each instance: one claim of the class-wide batch and one of the extended deadlines, whatever the
    // number of members; no statement per member.
    const producing = statements.filter((text) => text.includes("'TASK_DUE_REMINDER'"));
    expect(producing).toHaveLength(4);

    // Later passes add nothing.
    await Promise.all(producers.map((producer) => producer.remindDue()));
    expect(await remindersOf(first, taskId)).toHaveLength(reminders.length);
  }, 120_000);

  /** A class of its own with `count` members besides the owner, so its class-wide reminders stay few. */
  async function smallClass(count: number): Promise<{ id: string; members: TestUser[] }> {
    const { id } = await createClass(first, owner);
    const members: TestUser[] = [];
    for (let i = 0; i < count; i += 1) {
      const member = await createUser(first);
      await addMember(first, id, member);
      members.push(member);
    }
    return { id, members };
  }

  it('a new or moved extension arms reminders at the new deadline; an unchanged one does not repeat them', async () => {
    const {
      id,
      members: [member],
    } = await smallClass(1);
    const { taskId, dueAt } = await taskDueIn(first, id, '30 minutes');
    const producer = first.app.get(NotificationProducer);
    await producer.remindDue();

    // Extended after the class-wide reminder: reminded again at the new deadline, once.
    const extended = await extend(first, taskId, [member.id], '2 hours');
    await producer.remindDue();
    await producer.remindDue();
    await first.db.query(
      `UPDATE task_extensions SET due_at = due_at + interval '1 hour' WHERE task_id = $1`,
      [taskId],
    );
    await producer.remindDue();
    const mine = (await remindersOf(first, taskId)).filter((row) => row.user_id === member.id);
    expect(mine.map((row) => [row.hours_before, row.due_at.toISOString()]).sort()).toEqual(
      [
        [1, dueAt.toISOString()],
        [24, extended.toISOString()],
        [24, new Date(extended.getTime() + 3_600_000).toISOString()],
      ].sort(),
    );
  });

  it('reminders and TASK_EXTENDED of an extended deadline are sent; once that deadline moves they are left unsent', async () => {
    const {
      id,
      members: [kept, moved],
    } = await smallClass(2);
    const { taskId } = await taskDueIn(first, id, '10 minutes');
    // Due in 50 minutes: their 1 h moment has come.
    await extend(first, taskId, [kept.id, moved.id], '40 minutes');
    await first.app.get(NotificationProducer).remindDue();
    // The owner at the class-wide deadline, the two members at theirs.
    expect(await remindersOf(first, taskId)).toHaveLength(3);
    const extensions = first.app.get(TaskExtensionsRepository);
    for (const user of [kept, moved]) await extensions.notifyExtended(first.db, taskId, user.id);

    await first.db.query(
      `UPDATE task_extensions SET due_at = due_at + interval '1 hour' WHERE task_id = $1 AND user_id = $2`,
      [taskId, moved.id],
    );
    // Only this task's notifications are routed and claimed here: the other tests' go first.
    await first.db.query(`DELETE FROM notifications WHERE task_id <> $1`, [taskId]);
    const notifications = first.app.get(NotificationsRepository);
    while ((await notifications.dispatchBatch(new Date())).notifications > 0);
    const claimed = await first.app
      .get(DeliveriesRepository)
      .claim(NotificationChannelName.EMAIL, 100, new Date());
    const reasons: Record<string, string | null> = {};
    for (const row of claimed) {
      const [{ user_id: userId }] = await first.db.query(`SELECT user_id FROM notifications WHERE id = $1`, [
        row.notification_id,
      ]);
      reasons[`${row.type} ${userId}`] = row.out_of_date;
    }
    expect(reasons).toEqual({
      [`TASK_DUE_REMINDER ${owner.id}`]: null,
      [`TASK_DUE_REMINDER ${kept.id}`]: null,
      [`TASK_DUE_REMINDER ${moved.id}`]: 'not sent: the due time moved',
      [`TASK_EXTENDED ${kept.id}`]: null,
      [`TASK_EXTENDED ${moved.id}`]: 'not sent: the extension changed',
    });
  });
  it('reminds only of an announced task: one that became visible after this run announced is reminded of after its announcement', async () => {
    const producer = first.app.get(NotificationProducer);
    // Published and due in 30 min, but not announced yet: it appeared after the run's announcements.
    const { id: smallClassId } = await createClass(first, owner);
    const taskId = await seedTask(first, smallClassId);
    await first.db.query(`UPDATE tasks SET due_at = now() + interval '30 minutes' WHERE id = $1`, [taskId]);
    const types = async (): Promise<string[]> =>
      (await notificationsOfTask(first, taskId))
        .filter((row) => row.user_id === owner.id)
        .map((row) => row.type);

    await producer.remindDue();
    expect(await types()).toEqual([]);
    await producer.publishDue('all');
    await producer.remindDue();
    expect(await types()).toEqual(['TASK_PUBLISHED', 'TASK_DUE_REMINDER']);
  });
});
