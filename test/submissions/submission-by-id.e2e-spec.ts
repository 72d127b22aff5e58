import { randomUUID } from 'node:crypto';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { addMember } from '../utils/classes';
import { apiError as error } from '../utils/expect';
import { putSubmission, seedTask, SubmissionJson, uploadSubmissionAttachment } from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, taskApi } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

describe('GET /submissions/:submissionId and PATCH …/submissions/:submissionId/exemplary', () => {
  const ctx = useTestApp();
  const { call } = taskApi(() => ctx);
  let cls: ClassWithRoles;
  let member2: TestUser;
  let taskId: string;
  let submission: SubmissionJson;

  const getById = (submissionId: string, user: TestUser | null) =>
    call('get', `/submissions/${submissionId}`, user);
  const markExemplary = (submissionId: string, user: TestUser | null, body?: object, task = taskId) =>
    call('patch', `/tasks/${task}/submissions/${submissionId}/exemplary`, user, body);
  // Released as grading does on an IMMEDIATE task, so the submitter sees it.
  const setScore = (submissionId: string, score: number | null) =>
    ctx.db.query(
      `UPDATE submissions SET score = $2, released_at = coalesce(released_at, now()) WHERE id = $1`,
      [submissionId, score],
    );

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx);
    member2 = await createUser(ctx);
    await addMember(ctx, cls.classId, member2, ClassRole.MEMBER);
    taskId = await seedTask(ctx, cls.classId);
    await putSubmission(ctx, taskId, cls.member, '# My answer');
    await uploadSubmissionAttachment(ctx, taskId, cls.member, { name: 'answer.txt', content: 'answer' });
    submission = (await call('get', `/tasks/${taskId}/submissions/me`, cls.member).expect(200)).body;
  });

  describe('GET /submissions/:submissionId', () => {
    it('answers OWNER and ADMIN exactly what the task-scoped grader read answers', async () => {
      for (const user of [cls.owner, cls.admin]) {
        const scoped = await call('get', `/tasks/${taskId}/submissions/${submission.id}`, user).expect(200);
        const res = await getById(submission.id, user);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(scoped.body);
        expect(res.body).toEqual(submission);
      }
    });

    it('answers the submitter their own submission, with body and attachments', async () => {
      const res = await getById(submission.id, cls.member);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(submission);
      expect(res.body.content).toBe('# My answer');
      expect(res.body.attachments).toHaveLength(1);
    });

    it('answers 403 FORBIDDEN to another MEMBER of the class and to a non-member', async () => {
      for (const user of [member2, cls.outsider]) {
        const res = await getById(submission.id, user);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
    });

    it('answers 404 NOT_FOUND for an unknown submission, 400 for a malformed id, 401 without a token', async () => {
      const unknown = await getById(randomUUID(), cls.owner);
      expect([unknown.status, unknown.body]).toEqual([404, error('NOT_FOUND')]);
      const malformed = await getById('not-a-uuid', cls.owner);
      expect([malformed.status, malformed.body]).toEqual([400, error('VALIDATION_ERROR')]);
      const anonymous = await getById(submission.id, null);
      expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
    });

    it('answers 404 for a submission of a deleted task, for everyone', async () => {
      const deletedTask = await seedTask(ctx, cls.classId);
      const { id } = await putSubmission(ctx, deletedTask, cls.member, 'answer');
      await call('delete', `/tasks/${deletedTask}`, cls.owner).expect(204);
      for (const user of [cls.owner, cls.admin, cls.member]) {
        const res = await getById(id, user);
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
    });

    it('answers the submitter 404 while the task is hidden from members again (start moved ahead), OWNER 200', async () => {
      const movedTask = await seedTask(ctx, cls.classId);
      const { id } = await putSubmission(ctx, movedTask, cls.member, 'answer');
      await ctx.db.query(`UPDATE tasks SET start_at = now() + interval '1 day' WHERE id = $1`, [movedTask]);
      const res = await getById(id, cls.member);
      expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      await getById(id, cls.owner).expect(200);
    });

    it('answers 403 to a submitter who left the class, as the task-scoped read of their own does', async () => {
      const leaver = await createUser(ctx);
      await addMember(ctx, cls.classId, leaver, ClassRole.MEMBER);
      const { id } = await putSubmission(ctx, taskId, leaver, 'answer');
      await call('delete', `/classes/${cls.classId}/members/${leaver.id}`, leaver).expect(204);
      const res = await getById(id, leaver);
      expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      await getById(id, cls.owner).expect(200);
    });
  });

  describe('PATCH /tasks/:taskId/submissions/:submissionId/exemplary', () => {
    let target: SubmissionJson;

    beforeEach(async () => {
      const task = await seedTask(ctx, cls.classId);
      target = await putSubmission(ctx, task, cls.member, 'answer');
    });

    it('lets OWNER and ADMIN mark and unmark a scored submission; the grade, grader and review time stay', async () => {
      await call('patch', `/tasks/${target.taskId}/submissions/${target.id}/grade`, cls.owner, {
        score: 90,
        feedback: 'Good',
      }).expect(200);
      const graded = (await getById(target.id, cls.owner).expect(200)).body as SubmissionJson;
      for (const user of [cls.admin, cls.owner]) {
        const marked = await markExemplary(target.id, user, { isExemplary: true }, target.taskId);
        expect(marked.status).toBe(200);
        expect(marked.body).toEqual({ ...graded, isExemplary: true });
        const unmarked = await markExemplary(target.id, user, { isExemplary: false }, target.taskId);
        expect(unmarked.status).toBe(200);
        expect(unmarked.body).toEqual({ ...graded, isExemplary: false });
      }
      expect(graded).toMatchObject({ score: 90, feedback: 'Good', reviewerId: cls.owner.id });
      const seen = (await getById(target.id, cls.member).expect(200)).body;
      expect(seen.isExemplary).toBe(false);
    });

    it('shows the flag to the submitter and in the grader list', async () => {
      await setScore(target.id, 75);
      await markExemplary(target.id, cls.owner, { isExemplary: true }, target.taskId).expect(200);
      expect((await getById(target.id, cls.member).expect(200)).body.isExemplary).toBe(true);
      const list = (await call('get', `/tasks/${target.taskId}/submissions`, cls.admin).expect(200)).body;
      const entry = list.find((row: { userId: string }) => row.userId === cls.member.id);
      expect(entry.submission.isExemplary).toBe(true);
    });

    it('answers 400 VALIDATION_ERROR for marking a submission without a score, and changes nothing', async () => {
      const res = await markExemplary(target.id, cls.owner, { isExemplary: true }, target.taskId);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      expect((await getById(target.id, cls.owner).expect(200)).body.isExemplary).toBe(false);
      // Unmarking needs no score.
      await markExemplary(target.id, cls.owner, { isExemplary: false }, target.taskId).expect(200);
    });

    it('toggles the flag when the request has no body or an empty one (the web client sends none)', async () => {
      await setScore(target.id, 75);
      const flags: boolean[] = [];
      for (const body of [undefined, {}, undefined]) {
        const res = await markExemplary(target.id, cls.owner, body, target.taskId);
        expect(res.status).toBe(200);
        flags.push(res.body.isExemplary);
      }
      expect(flags).toEqual([true, false, true]);
      expect((await getById(target.id, cls.member).expect(200)).body.isExemplary).toBe(true);
    });

    it('answers 400 VALIDATION_ERROR to a toggle that would mark a submission without a score', async () => {
      const res = await markExemplary(target.id, cls.owner, undefined, target.taskId);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      expect((await getById(target.id, cls.owner).expect(200)).body.isExemplary).toBe(false);
    });

    it.each([
      ['isExemplary null', { isExemplary: null }],
      ['isExemplary as a string', { isExemplary: 'true' }],
      ['an unknown field', { isExemplary: true, score: 10 }],
    ])('answers 400 VALIDATION_ERROR for %s', async (_case, body) => {
      await setScore(target.id, 75);
      const res = await markExemplary(target.id, cls.owner, body, target.taskId);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
    });

    it('answers 403 FORBIDDEN to a MEMBER (the submitter too) and to a non-member', async () => {
      await setScore(target.id, 75);
      for (const user of [cls.member, member2, cls.outsider]) {
        const res = await markExemplary(target.id, user, { isExemplary: true }, target.taskId);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
      expect((await getById(target.id, cls.owner).expect(200)).body.isExemplary).toBe(false);
    });

    it('answers 404 for an unknown submission, one of another task, or an unknown task; 400 for bad ids', async () => {
      for (const [submissionId, task] of [
        [randomUUID(), target.taskId],
        [submission.id, target.taskId],
        [target.id, randomUUID()],
      ]) {
        const res = await markExemplary(submissionId, cls.owner, { isExemplary: false }, task);
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
      for (const [submissionId, task] of [
        ['nope', target.taskId],
        [target.id, 'nope'],
      ]) {
        const res = await markExemplary(submissionId, cls.owner, { isExemplary: false }, task);
        expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      }
      const anonymous = await markExemplary(target.id, null, { isExemplary: false }, target.taskId);
      expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
    });
  });
});
