import { TaskSubmissionCounts1763800006000 } from '../../migrations/1763800006000-TaskSubmissionCounts';
import { addMember } from '../utils/classes';
import { useTestApp } from '../utils/test-app';
import { ClassWithRoles, createClassWithRoles, createTask, taskApi } from '../utils/tasks';
import { createUser, TestUser } from '../utils/users';

/**
 * `submittedCount` is a counter kept by triggers (migration TaskSubmissionCounts); these tests hold it against
 * the count it replaces, submissions of current members, through every change that moves it.
 */
describe('submittedCount: members who have submitted, as a counter', () => {
  const ctx = useTestApp();
  const { call, detail } = taskApi(() => ctx);

  /** The count by definition, straight from the rows. */
  const countedFromRows = async (taskId: string): Promise<number> => {
    const [row] = await ctx.db.query(
      `SELECT count(*)::int AS n
         FROM submissions s
         JOIN tasks t ON t.id = s.task_id
         JOIN class_members cm ON cm.class_id = t.class_id AND cm.user_id = s.user_id
        WHERE s.task_id = $1`,
      [taskId],
    );
    return row.n;
  };

  /**
   * submittedCount in the class list and in the OWNER's detail, which must agree with the rows and with the
   * entries of the grader's list that say `submitted`.
   */
  const submittedCount = async (cls: ClassWithRoles, taskId: string): Promise<number> => {
    const list = await call('get', `/classes/${cls.classId}/tasks`, cls.owner).expect(200);
    const listed = list.body.find((task: { id: string }) => task.id === taskId).submittedCount;
    const task = await detail(taskId, cls.owner);
    expect(task.submittedCount).toBe(listed);
    expect(task.stats?.submittedCount).toBe(listed);
    const roster = await call('get', `/tasks/${taskId}/submissions`, cls.owner).expect(200);
    expect(roster.body.filter((entry: { submitted: boolean }) => entry.submitted)).toHaveLength(listed);
    expect(listed).toBe(await countedFromRows(taskId));
    return listed;
  };

  const put = (taskId: string, user: TestUser, content = 'my answer') =>
    ctx.http.put(`/tasks/${taskId}/submissions/me`).set('Authorization', user.auth).send({ content });

  const leave = (cls: ClassWithRoles, user: TestUser) =>
    call('delete', `/classes/${cls.classId}/members/${user.id}`, user).expect(204);

  const inviteCodeOf = async (cls: ClassWithRoles): Promise<string> =>
    (await ctx.db.query(`SELECT invite_code FROM classes WHERE id = $1`, [cls.classId]))[0].invite_code;

  it('counts a first submission once, not its updates', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    expect(await submittedCount(cls, task.id)).toBe(0);
    await put(task.id, cls.member).expect(200);
    await put(task.id, cls.member, 'second draft').expect(200);
    await put(task.id, cls.admin).expect(200);
    expect(await submittedCount(cls, task.id)).toBe(2);
  });

  it('drops a member who leaves and counts them again when they rejoin', async () => {
    const cls = await createClassWithRoles(ctx);
    const [first, second] = await Promise.all([
      createTask(ctx, cls.classId, cls.owner),
      createTask(ctx, cls.classId, cls.owner),
    ]);
    await put(first.id, cls.member).expect(200);
    await put(second.id, cls.member).expect(200);
    await put(first.id, cls.admin).expect(200);

    await leave(cls, cls.member);
    expect(await submittedCount(cls, first.id)).toBe(1);
    expect(await submittedCount(cls, second.id)).toBe(0);

    await call('post', '/classes/join', cls.member, { inviteCode: await inviteCodeOf(cls) }).expect(200);
    expect(await submittedCount(cls, first.id)).toBe(2);
    expect(await submittedCount(cls, second.id)).toBe(1);
  });

  it('follows deleted users and deleted submissions', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    const extra = await createUser(ctx);
    await addMember(ctx, cls.classId, extra);
    await Promise.all([put(task.id, cls.member).expect(200), put(task.id, extra).expect(200)]);
    expect(await submittedCount(cls, task.id)).toBe(2);

    // As the clean-up of accounts does: the personal class first, then the user (cascading to the rest).
    await ctx.db.query(`DELETE FROM classes WHERE owner_id = $1`, [extra.id]);
    await ctx.db.query(`DELETE FROM users WHERE id = $1`, [extra.id]);
    expect(await submittedCount(cls, task.id)).toBe(1);
    await ctx.db.query(`DELETE FROM submissions WHERE task_id = $1`, [task.id]);
    expect(await submittedCount(cls, task.id)).toBe(0);
  });

  it('does not count a submission whose author is no longer a member', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    await ctx.db.query(`DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`, [
      cls.classId,
      cls.member.id,
    ]);
    // Stored by SQL (the API refuses non-members): such a row exists when a member leaves as they submit.
    await ctx.db.query(`INSERT INTO submissions (task_id, user_id) VALUES ($1, $2)`, [
      task.id,
      cls.member.id,
    ]);
    expect(await submittedCount(cls, task.id)).toBe(0);
  });

  it('stays exact when members submit and leave at the same time', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    const members = await Promise.all(Array.from({ length: 16 }, () => createUser(ctx)));
    await Promise.all(members.map((user) => addMember(ctx, cls.classId, user)));
    await Promise.all(
      members.flatMap((user, i) => [
        put(task.id, user).then((res) => expect([200, 403]).toContain(res.status)),
        ...(i % 2 === 0 ? [leave(cls, user)] : []),
      ]),
    );
    expect(await submittedCount(cls, task.id)).toBe(await countedFromRows(task.id));
    expect(await countedFromRows(task.id)).toBeGreaterThanOrEqual(8);
  });

  it('is rebuilt from the rows by its migration', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    await Promise.all([put(task.id, cls.member).expect(200), put(task.id, cls.admin).expect(200)]);
    await leave(cls, cls.admin);

    const migration = new TaskSubmissionCounts1763800006000();
    const runner = ctx.db.createQueryRunner();
    try {
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    expect(await submittedCount(cls, task.id)).toBe(1);
  });
});
