import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { addMember, createClass, TestClass } from '../utils/classes';
import {
  FAST_NOTIFICATIONS,
  inbox,
  notificationsOfTask,
  NotificationRow,
  waitFor,
} from '../utils/notifications';
import { createDraft, createTask } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

/** Reminder offsets of this file: 7.2 s and 3.6 s before the due time. */
const OFFSETS = [0.002, 0.001];
const seconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

describe('notifications: production of TASK_PUBLISHED and TASK_DUE_REMINDER', () => {
  const ctx = useTestApp({ ...FAST_NOTIFICATIONS, REMINDER_HOURS_BEFORE_DUE: OFFSETS.join(',') });

  interface Classroom {
    cls: TestClass;
    owner: TestUser;
    admin: TestUser;
    members: TestUser[];
    outsider: TestUser;
  }

  async function classroom(memberCount = 2, timezone = 'UTC'): Promise<Classroom> {
    const owner = await createUser(ctx, { nickname: 'Owner' });
    const cls = await createClass(ctx, owner, { name: 'Physics 101' });
    const admin = await createUser(ctx, { nickname: 'Admin' });
    await addMember(ctx, cls.id, admin, ClassRole.ADMIN);
    const members: TestUser[] = [];
    for (let i = 0; i < memberCount; i += 1) {
      const member = await createUser(ctx, { timezone });
      await addMember(ctx, cls.id, member);
      members.push(member);
    }
    return { cls, owner, admin, members, outsider: await createUser(ctx) };
  }

  const ofType = (rows: NotificationRow[], type: string) => rows.filter((row) => row.type === type);
  const recipients = (rows: NotificationRow[]) => rows.map((row) => row.user_id).sort();
  const ids = (...users: TestUser[]) => users.map((user) => user.id).sort();

  async function published(taskId: string, count: number): Promise<NotificationRow[]> {
    return waitFor(`${count} TASK_PUBLISHED notifications`, async () => {
      const rows = ofType(await notificationsOfTask(ctx, taskId), 'TASK_PUBLISHED');
      return rows.length >= count && rows.every((row) => row.status === 'SENT') && rows;
    });
  }

  describe('TASK_PUBLISHED', () => {
    it('reaches every class member at once when a task is created; publishing does not wait for it', async () => {
      const room = await classroom(2);
      const started = Date.now();
      const task = await createTask(ctx, room.cls.id, room.owner, {
        title: 'Lab report',
        dueAt: '2030-03-01T10:00:00.000Z',
      });
      const rows = await published(task.id, 4);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(recipients(rows)).toEqual(ids(room.owner, room.admin, ...room.members));
      const page = await inbox(ctx, room.members[0]);
      expect(page.items).toEqual([
        {
          id: expect.any(String),
          type: 'TASK_PUBLISHED',
          taskId: task.id,
          classId: room.cls.id,
          taskTitle: 'Lab report',
          className: 'Physics 101',
          title: 'New task in Physics 101: Lab report',
          content: '"Lab report" was published in Physics 101. Due Fri 01 Mar 2030 10:00 (UTC).',
          readAt: null,
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      ]);
      expect(page.unreadCount).toBe(1);
      expect((await inbox(ctx, room.outsider)).items).toEqual([]);
    });

    it("writes times in each recipient's time zone", async () => {
      const room = await classroom(1, 'Asia/Shanghai');
      const task = await createTask(ctx, room.cls.id, room.owner, {
        title: 'Essay',
        dueAt: '2030-03-01T20:00:00.000Z',
      });
      await published(task.id, 3);
      const [item] = (await inbox(ctx, room.members[0])).items;
      expect(item.content).toBe(
        '"Essay" was published in Physics 101. Due Sat 02 Mar 2030 04:00 (Asia/Shanghai).',
      );
      const [ownersItem] = (await inbox(ctx, room.owner)).items;
      expect(ownersItem.content).toBe(
        '"Essay" was published in Physics 101. Due Fri 01 Mar 2030 20:00 (UTC).',
      );
      const undated = await createTask(ctx, room.cls.id, room.owner, { title: 'Reading' });
      await published(undated.id, 3);
      const [latest] = (await inbox(ctx, room.members[0])).items;
      expect(latest.content).toBe('"Reading" was published in Physics 101. It has no due date.');
    });

    it('is produced when a draft is published, once, and never for a draft', async () => {
      const room = await classroom(1);
      const draft = await createDraft(ctx, room.cls.id, room.owner, { title: 'Draft task' });
      const control = await createTask(ctx, room.cls.id, room.owner);
      // The control's notifications show a production cycle has passed over the draft too.
      await published(control.id, 3);
      expect(await notificationsOfTask(ctx, draft.id)).toEqual([]);

      await ctx.http
        .post(`/tasks/${draft.id}/publish`)
        .set('Authorization', room.owner.auth)
        .send({})
        .expect(200);
      const rows = await published(draft.id, 3);
      expect(recipients(rows)).toEqual(ids(room.owner, room.admin, ...room.members));

      await ctx.http
        .post(`/tasks/${draft.id}/publish`)
        .set('Authorization', room.owner.auth)
        .send({})
        .expect(200);
      const second = await createTask(ctx, room.cls.id, room.owner);
      await published(second.id, 3);
      expect(await notificationsOfTask(ctx, draft.id)).toHaveLength(3);
    });

    it('waits for a future startAt, and goes to the members of that moment', async () => {
      const room = await classroom(1);
      const task = await createTask(ctx, room.cls.id, room.owner, { startAt: seconds(2) });
      const control = await createTask(ctx, room.cls.id, room.owner);
      await published(control.id, 3);
      expect(await notificationsOfTask(ctx, task.id)).toEqual([]);
      const late = await createUser(ctx);
      await addMember(ctx, room.cls.id, late);

      const rows = await published(task.id, 4);
      expect(recipients(rows)).toEqual(ids(room.owner, room.admin, room.members[0], late));
      const startAt = new Date(task.startAt!).getTime();
      expect(
        Math.min(
          ...rows.map((row) => new Date((row as unknown as { created_at: Date }).created_at).getTime()),
        ),
      ).toBeGreaterThanOrEqual(startAt);
    });

    it('goes only to the members at publication: a later member gets none', async () => {
      const room = await classroom(1);
      const task = await createTask(ctx, room.cls.id, room.owner);
      await published(task.id, 3);
      const late = await createUser(ctx);
      await addMember(ctx, room.cls.id, late);
      const control = await createTask(ctx, room.cls.id, room.owner);
      await published(control.id, 4);
      expect(recipients(await notificationsOfTask(ctx, task.id))).toEqual(
        ids(room.owner, room.admin, ...room.members),
      );
    });

    it('is not produced for a scheduled task deleted before its start', async () => {
      const room = await classroom(1);
      const task = await createTask(ctx, room.cls.id, room.owner, { startAt: seconds(1) });
      await ctx.http.delete(`/tasks/${task.id}`).set('Authorization', room.owner.auth).expect(204);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const control = await createTask(ctx, room.cls.id, room.owner);
      await published(control.id, 3);
      const [{ count }] = await ctx.db.query(
        `SELECT count(*)::int AS count FROM notifications WHERE user_id = $1 AND type = 'TASK_PUBLISHED'`,
        [room.members[0].id],
      );
      expect(count).toBe(1);
    });
  });

  describe('TASK_DUE_REMINDER', () => {
    async function reminders(taskId: string, count: number): Promise<NotificationRow[]> {
      return waitFor(`${count} reminders`, async () => {
        const rows = ofType(await notificationsOfTask(ctx, taskId), 'TASK_DUE_REMINDER');
        return rows.length >= count && rows.every((row) => row.status === 'SENT') && rows;
      });
    }

    /** Waits until `dueAt` has passed and one more scheduler run happened. */
    async function afterDue(dueAt: string): Promise<void> {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, new Date(dueAt).getTime() - Date.now()) + 1500),
      );
    }

    it('reminds members without a submission once per offset, exactly once', async () => {
      const room = await classroom(2);
      const [submitter, slacker] = room.members;
      const dueAt = seconds(8.5);
      const task = await createTask(ctx, room.cls.id, room.owner, { title: 'Worksheet', dueAt });
      await ctx.http
        .put(`/tasks/${task.id}/submissions/me`)
        .set('Authorization', submitter.auth)
        .send({ content: 'my answers' })
        .expect(200);

      const first = await reminders(task.id, 3);
      expect(recipients(first)).toEqual(ids(room.owner, room.admin, slacker));
      expect(first.every((row) => row.hours_before === 0.002)).toBe(true);
      const firstAt = Date.now();
      expect(new Date(dueAt).getTime() - firstAt).toBeGreaterThan(3000);

      const all = await reminders(task.id, 6);
      expect(
        all
          .filter((row) => row.hours_before === 0.001)
          .map((row) => row.user_id)
          .sort(),
      ).toEqual(ids(room.owner, room.admin, slacker));
      // Two more scheduler runs before the due time add nothing.
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const final = ofType(await notificationsOfTask(ctx, task.id), 'TASK_DUE_REMINDER');
      expect(final).toHaveLength(6);
      expect(final.every((row) => new Date(row.due_at!).toISOString() === dueAt)).toBe(true);

      const item = (await inbox(ctx, slacker)).items.find((entry) => entry.type === 'TASK_DUE_REMINDER')!;
      const local = new Date(dueAt);
      const hhmm = local.toISOString().slice(11, 16);
      expect(item.title).toMatch(
        new RegExp(`^Reminder: Worksheet is due \\w{3} \\d\\d \\w{3} \\d{4} ${hhmm} \\(UTC\\)$`),
      );
      expect(item.content).toMatch(
        new RegExp(
          `^"Worksheet" in Physics 101 is due \\w{3} \\d\\d \\w{3} \\d{4} ${hhmm} \\(UTC\\), and you have not submitted it yet\\.$`,
        ),
      );
    });

    it('sends one reminder, for the nearest offset, when the task is published after the earlier ones', async () => {
      const room = await classroom(1);
      const dueAt = seconds(3);
      const task = await createTask(ctx, room.cls.id, room.owner, { dueAt });
      const rows = await reminders(task.id, 3);
      expect(rows.every((row) => row.hours_before === 0.001)).toBe(true);
      await afterDue(dueAt);
      expect(ofType(await notificationsOfTask(ctx, task.id), 'TASK_DUE_REMINDER')).toHaveLength(3);
    });

    it('arms new reminders when dueAt moves', async () => {
      const room = await classroom(1);
      const task = await createTask(ctx, room.cls.id, room.owner, { dueAt: seconds(3) });
      await reminders(task.id, 3);
      const movedDue = seconds(5);
      await ctx.http
        .patch(`/tasks/${task.id}`)
        .set('Authorization', room.owner.auth)
        .send({ dueAt: movedDue })
        .expect(200);
      const rows = await reminders(task.id, 6);
      const moved = rows.filter((row) => new Date(row.due_at!).toISOString() === movedDue);
      expect(recipients(moved)).toEqual(ids(room.owner, room.admin, ...room.members));
      expect(moved[0].title).toContain('is due');
    });

    it('reminds nobody about drafts, deleted tasks, tasks not started, and tasks already due', async () => {
      const room = await classroom(2);
      const [submitter] = room.members;
      const draft = await createDraft(ctx, room.cls.id, room.owner, { dueAt: seconds(2) });
      const deleted = await createTask(ctx, room.cls.id, room.owner, { dueAt: seconds(2) });
      await ctx.http
        .put(`/tasks/${deleted.id}/submissions/me`)
        .set('Authorization', submitter.auth)
        .send({ content: 'x' });
      await ctx.http.delete(`/tasks/${deleted.id}`).set('Authorization', room.owner.auth).expect(204);
      const [{ deleted_at: deletedAt }] = await ctx.db.query(`SELECT deleted_at FROM tasks WHERE id = $1`, [
        deleted.id,
      ]);
      expect(deletedAt).not.toBeNull();
      const pastDue = await createTask(ctx, room.cls.id, room.owner, { dueAt: seconds(-60) });
      const control = await createTask(ctx, room.cls.id, room.owner, { dueAt: seconds(2) });
      // The control's reminders show a scheduler run has passed over the others while they were due soon.
      await reminders(control.id, 4);
      for (const taskId of [draft.id, deleted.id, pastDue.id]) {
        expect(ofType(await notificationsOfTask(ctx, taskId), 'TASK_DUE_REMINDER')).toEqual([]);
      }
    });
  });
});

describe('notifications: order of production in one scheduled run', () => {
  // Only the scheduled job runs: it announces the task and reminds of it in the same run.
  const ctx = useTestApp({ SCHEDULER_CRON: '*/1 * * * * *', DELIVERY_POLL_INTERVAL_MS: '3600000' });

  it('announces a task before it reminds of it', async () => {
    const owner = await createUser(ctx);
    const cls = await createClass(ctx, owner);
    // Due within the default offset of 24 hours: its reminder is due at once.
    const dueAt = new Date(Date.now() + 3_600_000).toISOString();
    const task = await createTask(ctx, cls.id, owner, { dueAt });
    const rows = await waitFor('both notifications', async () => {
      const found = await notificationsOfTask(ctx, task.id);
      return found.length === 2 && found;
    });
    expect(rows.map((row) => row.type)).toEqual(['TASK_PUBLISHED', 'TASK_DUE_REMINDER']);
    // Routing into the inbox follows production in the same run, not in the same transaction.
    const items = await waitFor('both in the inbox', async () => {
      const found = (await inbox(ctx, owner)).items;
      return found.length === 2 && found.map((item) => item.type);
    });
    expect(items).toEqual(['TASK_DUE_REMINDER', 'TASK_PUBLISHED']);
  });
});
