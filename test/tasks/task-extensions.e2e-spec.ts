import { randomBytes } from 'node:crypto';
import { addMember } from '../utils/classes';
import { apiError, ISO_TIMESTAMP } from '../utils/expect';
import { inbox, setPref, waitFor } from '../utils/notifications';
import { putSubmission, seedTask, submissionWrites } from '../utils/submissions';
import {
  ClassWithRoles,
  createClassWithRoles,
  createDraft,
  createTask,
  FUTURE,
  TaskJson,
  UNKNOWN_ID,
} from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { startWebhookReceiver, WebhookReceiver } from '../fakes/webhook-receiver';

const DUE = '2031-03-01T10:00:00.000Z';
const LATER = '2031-03-08T10:00:00.000Z';
const LATEST = '2031-03-15T10:00:00.000Z';

/** A supertest assertion: answered `status` with the error body of `code`. */
const refused =
  (status: number, code: string) =>
  (res: { status: number; body: unknown }): void => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: apiError(code) });
  };

/** A time relative to now, as the API takes it. */
const fromNow = (minutes: number): string => new Date(Date.now() + minutes * 60_000).toISOString();

interface ExtensionJson {
  taskId: string;
  userId: string;
  nickname: string | null;
  dueAt: string;
  allowLateSubmission: boolean | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

describe("due-date extensions (a member's own deadline) and the late flag", () => {
  // The delivery loop runs (TASK_EXTENDED reaches inbox and webhook); the scheduled reminder job does not.
  const ctx = useTestApp({
    DELIVERY_POLL_INTERVAL_MS: '100',
    DELIVERY_RETRY_BASE_SECONDS: '0',
    SCHEDULER_CRON: '0 0 0 1 1 *',
  });
  let receiver: WebhookReceiver;
  let cls: ClassWithRoles;
  /** A second MEMBER, without extensions unless a test gives one. */
  let peer: TestUser;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cls = await createClassWithRoles(ctx, { member: 'Asia/Shanghai' });
    peer = await createUser(ctx);
    await addMember(ctx, cls.classId, peer);
  });
  afterAll(() => receiver.close());

  const put = (taskId: string, target: { id: string }, caller: TestUser, body: object) =>
    ctx.http.put(`/tasks/${taskId}/extensions/${target.id}`).set('Authorization', caller.auth).send(body);
  const remove = (taskId: string, target: { id: string }, caller: TestUser) =>
    ctx.http.delete(`/tasks/${taskId}/extensions/${target.id}`).set('Authorization', caller.auth);
  const list = (taskId: string, caller: TestUser) =>
    ctx.http.get(`/tasks/${taskId}/extensions`).set('Authorization', caller.auth);
  const detail = async (taskId: string, user: TestUser): Promise<TaskJson> =>
    (await ctx.http.get(`/tasks/${taskId}`).set('Authorization', user.auth).expect(200)).body;
  const inClassList = async (taskId: string, user: TestUser): Promise<TaskJson> => {
    const res = await ctx.http
      .get(`/classes/${cls.classId}/tasks`)
      .set('Authorization', user.auth)
      .expect(200);
    return res.body.find((task: TaskJson) => task.id === taskId);
  };
  const mineIds = async (user: TestUser, ids: string[]): Promise<string[]> => {
    const res = await ctx.http.get('/tasks/mine').set('Authorization', user.auth).expect(200);
    return res.body.map((task: TaskJson) => task.id).filter((id: string) => ids.includes(id));
  };
  const extensionRows = async (taskId: string): Promise<number> =>
    (await ctx.db.query(`SELECT count(*)::int AS n FROM task_extensions WHERE task_id = $1`, [taskId]))[0].n;
  const noticesOf = async (taskId: string, user: { id: string }): Promise<{ my_due_at: Date }[]> =>
    ctx.db.query(
      `SELECT my_due_at FROM notifications WHERE task_id = $1 AND user_id = $2 AND type = 'TASK_EXTENDED'
        ORDER BY created_at, id`,
      [taskId, user.id],
    );

  describe('the extension routes', () => {
    it('OWNER and ADMIN create, replace, list and delete an extension; the Extension has every field', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      const created = await put(task.id, cls.member, cls.owner, { dueAt: LATER }).expect(200);
      expect(created.body).toEqual({
        taskId: task.id,
        userId: cls.member.id,
        nickname: null,
        dueAt: LATER,
        allowLateSubmission: null,
        createdBy: cls.owner.id,
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        updatedAt: expect.stringMatching(ISO_TIMESTAMP),
      });

      // Another offset, same instant: answered in UTC.
      const replaced = await put(task.id, cls.member, cls.admin, {
        dueAt: '2031-03-15T18:00:00+08:00',
        allowLateSubmission: false,
      }).expect(200);
      expect(replaced.body).toMatchObject({
        dueAt: LATEST,
        allowLateSubmission: false,
        createdBy: cls.owner.id,
        createdAt: created.body.createdAt,
      });
      expect(await extensionRows(task.id)).toBe(1);

      await ctx.db.query(`UPDATE users SET nickname = 'Zed' WHERE id = $1`, [cls.member.id]);
      await ctx.db.query(`UPDATE users SET nickname = 'amy' WHERE id = $1`, [peer.id]);
      try {
        await put(task.id, peer, cls.admin, { dueAt: LATER, allowLateSubmission: true }).expect(200);
        const listed = (await list(task.id, cls.admin).expect(200)).body as ExtensionJson[];
        expect(listed.map((e) => [e.nickname, e.dueAt, e.allowLateSubmission])).toEqual([
          ['amy', LATER, true],
          ['Zed', LATEST, false],
        ]);
        expect((await list(task.id, cls.owner).expect(200)).body).toEqual(listed);
      } finally {
        await ctx.db.query(`UPDATE users SET nickname = NULL WHERE id = ANY($1)`, [[cls.member.id, peer.id]]);
      }

      await remove(task.id, cls.member, cls.admin).expect(204);
      await remove(task.id, cls.member, cls.owner).expect(refused(404, 'NOT_FOUND'));
      await remove(task.id, peer, cls.owner).expect(204);
      expect((await list(task.id, cls.owner).expect(200)).body).toEqual([]);
      expect((await detail(task.id, cls.member)).hasExtension).toBe(false);
    });

    it('refuses a MEMBER and a non-member (403) on every route; a MEMBER sees a draft as missing (404)', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      const draft = await createDraft(ctx, cls.classId, cls.owner, { dueAt: DUE });
      for (const caller of [cls.member, cls.outsider]) {
        await put(task.id, peer, caller, { dueAt: LATER }).expect(refused(403, 'FORBIDDEN'));
        await put(task.id, caller, caller, { dueAt: LATER }).expect(refused(403, 'FORBIDDEN'));
        await remove(task.id, peer, caller).expect(refused(403, 'FORBIDDEN'));
        await list(task.id, caller).expect(refused(403, 'FORBIDDEN'));
      }
      await put(draft.id, peer, cls.member, { dueAt: LATER }).expect(refused(404, 'NOT_FOUND'));
      await list(draft.id, cls.member).expect(refused(404, 'NOT_FOUND'));
      await put(draft.id, cls.outsider, cls.outsider, { dueAt: LATER }).expect(refused(403, 'FORBIDDEN'));
      expect(await extensionRows(task.id)).toBe(0);
    });

    it('answers 404 for a target who is not a member, an unknown task or a deleted one, and DELETE without extension', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      await put(task.id, cls.outsider, cls.owner, { dueAt: LATER }).expect(refused(404, 'NOT_FOUND'));
      await put(task.id, { id: UNKNOWN_ID }, cls.admin, { dueAt: LATER }).expect(refused(404, 'NOT_FOUND'));
      await remove(task.id, cls.outsider, cls.owner).expect(refused(404, 'NOT_FOUND'));
      await remove(task.id, peer, cls.admin).expect(refused(404, 'NOT_FOUND'));
      await put(UNKNOWN_ID, peer, cls.owner, { dueAt: LATER }).expect(refused(404, 'NOT_FOUND'));
      await list(UNKNOWN_ID, cls.owner).expect(refused(404, 'NOT_FOUND'));

      await put(task.id, peer, cls.owner, { dueAt: LATER }).expect(200);
      await ctx.http.delete(`/tasks/${task.id}`).set('Authorization', cls.owner.auth).expect(204);
      await put(task.id, peer, cls.owner, { dueAt: LATEST }).expect(refused(404, 'NOT_FOUND'));
      await remove(task.id, peer, cls.owner).expect(refused(404, 'NOT_FOUND'));
      await list(task.id, cls.owner).expect(refused(404, 'NOT_FOUND'));
    });

    it('answers 400 when the task has no dueAt, when the extension is not later, and for an invalid body or id', async () => {
      const open = await createTask(ctx, cls.classId, cls.owner);
      await put(open.id, peer, cls.owner, { dueAt: LATER }).expect(refused(400, 'VALIDATION_ERROR'));
      const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      await put(task.id, peer, cls.owner, { dueAt: DUE }).expect(refused(400, 'VALIDATION_ERROR'));
      await put(task.id, peer, cls.admin, { dueAt: '2031-03-01T09:59:59.999Z' }).expect(
        refused(400, 'VALIDATION_ERROR'),
      );
      for (const body of [
        {},
        { dueAt: null },
        { dueAt: '2031-03-08 10:00' },
        { dueAt: '2031-03-08T10:00:00' },
        { dueAt: LATER, allowLateSubmission: 'yes' },
        { dueAt: LATER, extra: true },
      ]) {
        await put(task.id, peer, cls.owner, body).expect(refused(400, 'VALIDATION_ERROR'));
      }
      await ctx.http
        .put(`/tasks/${task.id}/extensions/not-a-uuid`)
        .set('Authorization', cls.owner.auth)
        .send({ dueAt: LATER })
        .expect(refused(400, 'VALIDATION_ERROR'));
      await ctx.http
        .delete(`/tasks/${task.id}/extensions/not-a-uuid`)
        .set('Authorization', cls.owner.auth)
        .expect(refused(400, 'VALIDATION_ERROR'));
      expect(await extensionRows(task.id)).toBe(0);
      // An explicit null is the task's own rule.
      const res = await put(task.id, peer, cls.owner, { dueAt: LATER, allowLateSubmission: null }).expect(
        200,
      );
      expect(res.body.allowLateSubmission).toBeNull();
    });
  });

  describe('myDueAt and hasExtension', () => {
    it('show the caller’s own deadline in the class list, the detail and /tasks/mine, which orders by it', async () => {
      const first = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      const second = await createTask(ctx, cls.classId, cls.owner, { dueAt: LATER });
      const ids = [first.id, second.id];
      await put(first.id, cls.member, cls.admin, { dueAt: LATEST }).expect(200);

      for (const read of [detail, inClassList]) {
        expect(await read(first.id, cls.member)).toMatchObject({
          dueAt: DUE,
          myDueAt: LATEST,
          hasExtension: true,
        });
        expect(await read(first.id, peer)).toMatchObject({ dueAt: DUE, myDueAt: DUE, hasExtension: false });
        expect(await read(first.id, cls.owner)).toMatchObject({
          dueAt: DUE,
          myDueAt: DUE,
          hasExtension: false,
        });
        expect(await read(second.id, cls.member)).toMatchObject({ myDueAt: LATER, hasExtension: false });
      }
      expect(await mineIds(cls.member, ids)).toEqual([second.id, first.id]);
      expect(await mineIds(peer, ids)).toEqual([first.id, second.id]);
      const mine = await ctx.http.get('/tasks/mine').set('Authorization', cls.member.auth).expect(200);
      expect(mine.body.find((task: TaskJson) => task.id === first.id)).toMatchObject({ myDueAt: LATEST });
    });

    it('follow the task: dueAt moved past the extension wins, no dueAt means no deadline, moving back restores it', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      await put(task.id, cls.member, cls.owner, { dueAt: LATER }).expect(200);
      const patch = (dueAt: string | null) =>
        ctx.http.patch(`/tasks/${task.id}`).set('Authorization', cls.owner.auth).send({ dueAt }).expect(200);

      await patch(LATEST);
      expect(await detail(task.id, cls.member)).toMatchObject({ myDueAt: LATEST, hasExtension: true });
      await patch(null);
      expect(await detail(task.id, cls.member)).toMatchObject({
        dueAt: null,
        myDueAt: null,
        hasExtension: true,
      });
      await patch(DUE);
      expect(await detail(task.id, cls.member)).toMatchObject({ myDueAt: LATER, hasExtension: true });
    });

    it('drafts and scheduled tasks take extensions, which apply once members see the task', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { dueAt: DUE });
      await put(draft.id, cls.member, cls.admin, { dueAt: LATER }).expect(200);
      const scheduled = await createTask(ctx, cls.classId, cls.owner, { startAt: FUTURE, dueAt: FUTURE });
      await put(scheduled.id, cls.member, cls.owner, { dueAt: '2099-01-02T00:00:00.000Z' }).expect(200);
      expect((await list(scheduled.id, cls.admin).expect(200)).body).toHaveLength(1);

      await ctx.http
        .post(`/tasks/${draft.id}/publish`)
        .set('Authorization', cls.owner.auth)
        .send({})
        .expect(200);
      expect(await detail(draft.id, cls.member)).toMatchObject({ myDueAt: LATER, hasExtension: true });
      // Hidden from the member while written: no TASK_EXTENDED (docs/decisions.md).
      expect(await noticesOf(draft.id, cls.member)).toHaveLength(0);
      expect(await noticesOf(scheduled.id, cls.member)).toHaveLength(0);
    });
  });

  describe('the late rule and isLate', () => {
    const writes = (taskId: string, user: TestUser) => submissionWrites(ctx, taskId, user);

    it('the member’s own deadline and late rule decide LATE_SUBMISSION_CLOSED for content and attachments', async () => {
      const taskId = await seedTask(ctx, cls.classId, { dueAt: fromNow(-60), allowLateSubmission: false });
      const member = writes(taskId, cls.member);
      await member.put().expect(refused(403, 'LATE_SUBMISSION_CLOSED'));
      await member.upload().expect(refused(403, 'LATE_SUBMISSION_CLOSED'));

      // Extended into the future: every write is open, for this member only.
      await put(taskId, cls.member, cls.owner, { dueAt: fromNow(60) }).expect(200);
      await member.put().expect(200);
      const uploaded = await member.upload().expect(201);
      await writes(taskId, peer).put().expect(refused(403, 'LATE_SUBMISSION_CLOSED'));

      // Extended, but that deadline has passed too.
      await put(taskId, cls.member, cls.owner, { dueAt: fromNow(-30) }).expect(200);
      await member.put().expect(refused(403, 'LATE_SUBMISSION_CLOSED'));
      await member.upload().expect(refused(403, 'LATE_SUBMISSION_CLOSED'));
      await member.remove(uploaded.body.id).expect(refused(403, 'LATE_SUBMISSION_CLOSED'));

      // The extension's own rule: late submissions allowed for this member.
      await put(taskId, cls.member, cls.owner, { dueAt: fromNow(-30), allowLateSubmission: true }).expect(
        200,
      );
      await member.remove(uploaded.body.id).expect(204);
      await member.put().expect(200);

      // And the other way round: the task allows late work, this member's extension does not.
      const lenient = await seedTask(ctx, cls.classId, { dueAt: fromNow(-60), allowLateSubmission: true });
      await writes(lenient, peer).put().expect(200);
      await put(lenient, peer, cls.admin, { dueAt: fromNow(-30), allowLateSubmission: false }).expect(200);
      await writes(lenient, peer).put().expect(refused(403, 'LATE_SUBMISSION_CLOSED'));
      await remove(lenient, peer, cls.admin).expect(204);
      await writes(lenient, peer).put().expect(200);
    });

    it('isLate compares firstSubmittedAt with the submitter’s deadline as it stands when read', async () => {
      const taskId = await seedTask(ctx, cls.classId, { dueAt: fromNow(-120), allowLateSubmission: true });
      await put(taskId, cls.member, cls.owner, { dueAt: fromNow(60) }).expect(200);
      const late = await putSubmission(ctx, taskId, peer, 'late');
      const inTime = await putSubmission(ctx, taskId, cls.member, 'in time');
      expect(late.isLate).toBe(true);
      expect(inTime.isLate).toBe(false);

      const lateFlags = async (): Promise<Record<string, boolean>> => {
        const res = await ctx.http
          .get(`/tasks/${taskId}/submissions`)
          .set('Authorization', cls.admin.auth)
          .expect(200);
        const flags: Record<string, boolean> = {};
        for (const entry of res.body) if (entry.submission) flags[entry.userId] = entry.submission.isLate;
        return flags;
      };
      expect(await lateFlags()).toEqual({ [peer.id]: true, [cls.member.id]: false });
      const own = await ctx.http
        .get(`/tasks/${taskId}/submissions/me`)
        .set('Authorization', peer.auth)
        .expect(200);
      expect(own.body.isLate).toBe(true);
      const byId = await ctx.http
        .get(`/tasks/${taskId}/submissions/${late.id}`)
        .set('Authorization', cls.owner.auth)
        .expect(200);
      expect(byId.body.isLate).toBe(true);
      const graded = await ctx.http
        .patch(`/tasks/${taskId}/submissions/${late.id}/grade`)
        .set('Authorization', cls.owner.auth)
        .send({ score: 80 })
        .expect(200);
      expect(graded.body.isLate).toBe(true);

      // The member's extension ends before their submission: late, judged now.
      await put(taskId, cls.member, cls.owner, { dueAt: fromNow(-90) }).expect(200);
      expect(await lateFlags()).toEqual({ [peer.id]: true, [cls.member.id]: true });
      // Moving the class-wide dueAt later clears the flag for everyone.
      await ctx.http
        .patch(`/tasks/${taskId}`)
        .set('Authorization', cls.owner.auth)
        .send({ dueAt: fromNow(120) })
        .expect(200);
      expect(await lateFlags()).toEqual({ [peer.id]: false, [cls.member.id]: false });
      // No deadline: never late.
      await ctx.db.query(`UPDATE tasks SET due_at = NULL WHERE id = $1`, [taskId]);
      expect(await lateFlags()).toEqual({ [peer.id]: false, [cls.member.id]: false });

      const csv = await ctx.http
        .get(`/tasks/${taskId}/submissions/export`)
        .set('Authorization', cls.owner.auth)
        .expect(200);
      expect(csv.text.replace(/^\uFEFF/, '').split('\r\n')[0]).toBe(
        'Nickname,School,Student number,Class,Task title,First submission time,Last update time,Score',
      );
    });
  });

  it('leaving the class and being removed drop the member’s extensions', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
    const leaver = await createUser(ctx);
    const removed = await createUser(ctx);
    await addMember(ctx, cls.classId, leaver);
    await addMember(ctx, cls.classId, removed);
    await put(task.id, leaver, cls.owner, { dueAt: LATER }).expect(200);
    await put(task.id, removed, cls.owner, { dueAt: LATER }).expect(200);

    await ctx.http
      .delete(`/classes/${cls.classId}/members/${leaver.id}`)
      .set('Authorization', leaver.auth)
      .expect(204);
    await ctx.http
      .delete(`/classes/${cls.classId}/members/${removed.id}`)
      .set('Authorization', cls.admin.auth)
      .expect(204);
    expect(await extensionRows(task.id)).toBe(0);

    // Back in the class: the task's own deadline.
    await addMember(ctx, cls.classId, leaver);
    expect(await detail(task.id, leaver)).toMatchObject({ myDueAt: DUE, hasExtension: false });
  });

  describe('TASK_EXTENDED', () => {
    it('reaches the inbox and the webhook (with data.myDueAt) when an extension is created or its dueAt changes', async () => {
      const hook = `/hook-${randomBytes(4).toString('hex')}`;
      const pref = await setPref(ctx, cls.member, { channel: 'WEBHOOK', address: receiver.url(hook) });
      receiver.setSecret(hook, pref.secret!);
      const task = await createTask(ctx, cls.classId, cls.owner, { title: 'Essay', dueAt: DUE });

      const hooks = () =>
        receiver.received
          .filter(
            (hit) =>
              hit.path === hook && hit.verified && (hit.body as { type: string }).type === 'TASK_EXTENDED',
          )
          .map((hit) => hit.body as { data: Record<string, unknown> });
      // Each notice is delivered before the next change: a delivery whose deadline no longer stands when its
      // turn comes is left unsent (docs/decisions.md).
      await put(task.id, cls.member, cls.owner, { dueAt: LATER }).expect(200);
      await waitFor('the first webhook', async () => hooks().length === 1, 10_000);
      await put(task.id, cls.member, cls.admin, { dueAt: LATER }).expect(200);
      await put(task.id, cls.member, cls.admin, { dueAt: LATER, allowLateSubmission: false }).expect(200);
      await put(task.id, cls.member, cls.owner, { dueAt: LATEST, allowLateSubmission: false }).expect(200);
      await waitFor('the second webhook', async () => hooks().length === 2, 10_000);
      await remove(task.id, cls.member, cls.owner).expect(204);
      expect((await noticesOf(task.id, cls.member)).map((n) => n.my_due_at.toISOString())).toEqual([
        LATER,
        LATEST,
      ]);
      expect(hooks().map((body) => body.data.myDueAt)).toEqual([LATER, LATEST]);
      for (const body of hooks())
        expect(body.data).toMatchObject({ taskId: task.id, taskTitle: 'Essay', dueAt: DUE });

      const extended = async () =>
        (await inbox(ctx, cls.member)).items.filter(
          (item) => item.type === 'TASK_EXTENDED' && item.taskId === task.id,
        );
      await waitFor('both notices in the inbox', async () => (await extended()).length === 2, 10_000);
      const [newest] = await extended();
      // Written in the member's timezone (Asia/Shanghai: LATEST is 18:00 there).
      expect(newest.content).toContain('Essay');
      expect(newest.content).toContain('18:00 (Asia/Shanghai)');
      // Nobody else hears of it.
      expect(await noticesOf(task.id, peer)).toHaveLength(0);
    });

    it('two teachers writing one extension at once leave one row and one notice per change of dueAt', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { dueAt: DUE });
      const days = (n: number) => new Date(Date.parse(DUE) + n * 86_400_000).toISOString();
      for (let round = 1; round <= 4; round += 1) {
        const [byOwner, byAdmin] = await Promise.all([
          put(task.id, peer, cls.owner, { dueAt: days(round) }),
          put(task.id, peer, cls.admin, { dueAt: days(round) }),
        ]);
        expect([byOwner.status, byAdmin.status]).toEqual([200, 200]);
        expect(await extensionRows(task.id)).toBe(1);
        expect(await noticesOf(task.id, peer)).toHaveLength(round);
      }
      // Two different values at once: both are changes, the row keeps the one written last.
      await Promise.all([
        put(task.id, peer, cls.owner, { dueAt: days(10) }).expect(200),
        put(task.id, peer, cls.admin, { dueAt: days(11) }).expect(200),
      ]);
      const notified = (await noticesOf(task.id, peer)).map((n) => n.my_due_at.toISOString());
      expect(notified).toHaveLength(6);
      expect(notified.slice(4).sort()).toEqual([days(10), days(11)]);
      const [{ due_at: stored }] = await ctx.db.query(
        `SELECT due_at FROM task_extensions WHERE task_id = $1`,
        [task.id],
      );
      expect([days(10), days(11)]).toContain(stored.toISOString());
    });
  });
});
