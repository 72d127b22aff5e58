import { randomUUID } from 'node:crypto';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { addMember } from '../utils/classes';
import { apiError as error } from '../utils/expect';
import { AttachmentJson, storedFileKeys } from '../utils/files';
import { putSubmission, seedTask, setDue, uploadSubmissionAttachment } from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, taskApi, uploadTaskAttachment } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

describe('DELETE /files/attachments/:attachmentId', () => {
  const ctx = useTestApp();
  const { call } = taskApi(() => ctx);
  let cls: ClassWithRoles;
  let member2: TestUser;

  const remove = (attachmentId: string, user: TestUser | null) =>
    call('delete', `/files/attachments/${attachmentId}`, user);
  const taskFile = async (taskId: string): Promise<AttachmentJson> =>
    uploadTaskAttachment(ctx, taskId, cls.owner, { name: 'sheet.txt', content: 'sheet' });
  const attachmentIds = async (path: string, user: TestUser): Promise<string[]> =>
    (await call('get', path, user).expect(200)).body.attachments.map((a: AttachmentJson) => a.id);

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx);
    member2 = await createUser(ctx);
    await addMember(ctx, cls.classId, member2, ClassRole.MEMBER);
  });

  describe('a task attachment', () => {
    let taskId: string;
    beforeEach(async () => {
      taskId = await seedTask(ctx, cls.classId);
    });

    it('is removed with its file by OWNER and ADMIN (204)', async () => {
      for (const user of [cls.owner, cls.admin]) {
        const attachment = await taskFile(taskId);
        expect(storedFileKeys(ctx)).toContain(attachment.fileKey);
        await remove(attachment.id, user).expect(204);
        expect(await attachmentIds(`/tasks/${taskId}`, cls.owner)).not.toContain(attachment.id);
        expect(storedFileKeys(ctx)).not.toContain(attachment.fileKey);
        const again = await remove(attachment.id, user);
        expect([again.status, again.body]).toEqual([404, error('NOT_FOUND')]);
      }
    });

    it('answers 403 FORBIDDEN to a MEMBER and to a non-member, and keeps the attachment', async () => {
      const attachment = await taskFile(taskId);
      for (const user of [cls.member, cls.outsider]) {
        const res = await remove(attachment.id, user);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
      expect(await attachmentIds(`/tasks/${taskId}`, cls.owner)).toContain(attachment.id);
    });

    it('answers a MEMBER 404 for an attachment of a draft, as the task is hidden from them', async () => {
      const draft = await seedTask(ctx, cls.classId, { isPublished: false });
      const attachment = await taskFile(draft);
      const res = await remove(attachment.id, cls.member);
      expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      await remove(attachment.id, cls.admin).expect(204);
    });
  });

  describe('a submission attachment', () => {
    let taskId: string;
    let attachment: AttachmentJson;
    beforeEach(async () => {
      taskId = await seedTask(ctx, cls.classId);
      attachment = await uploadSubmissionAttachment(ctx, taskId, cls.member);
    });

    it('is removed with its file by its submitter (204), moving lastUpdatedAt', async () => {
      const past = '2020-01-01T00:00:00.000Z';
      await ctx.db.query(`UPDATE submissions SET last_updated_at = $2 WHERE task_id = $1`, [taskId, past]);
      await remove(attachment.id, cls.member).expect(204);
      const after = (await call('get', `/tasks/${taskId}/submissions/me`, cls.member).expect(200)).body;
      expect(after.attachments).toEqual([]);
      expect(after.lastUpdatedAt > past).toBe(true);
      expect(storedFileKeys(ctx)).not.toContain(attachment.fileKey);
    });

    it('answers 403 FORBIDDEN to OWNER, ADMIN, another MEMBER and a non-member, and keeps it', async () => {
      for (const user of [cls.owner, cls.admin, member2, cls.outsider]) {
        const res = await remove(attachment.id, user);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
      expect(await attachmentIds(`/tasks/${taskId}/submissions/me`, cls.member)).toEqual([attachment.id]);
    });

    it('answers 403 LATE_SUBMISSION_CLOSED after the due time without late submissions', async () => {
      await setDue(ctx, taskId, '-1 minute', false);
      const res = await remove(attachment.id, cls.member);
      expect([res.status, res.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);
      await setDue(ctx, taskId, '-1 minute', true);
      await remove(attachment.id, cls.member).expect(204);
    });

    it('answers 403 TASK_LOCKED to a MEMBER while a blocking task has no submission of theirs', async () => {
      const blocker = await seedTask(ctx, cls.classId);
      await ctx.db.query(`UPDATE tasks SET blocked_by = $2 WHERE id = $1`, [taskId, [blocker]]);
      const res = await remove(attachment.id, cls.member);
      expect([res.status, res.body]).toEqual([403, error('TASK_LOCKED')]);
      await putSubmission(ctx, blocker, cls.member, 'done');
      await remove(attachment.id, cls.member).expect(204);
    });

    it('answers the same as the task-scoped delete of the submitter', async () => {
      await setDue(ctx, taskId, '-1 minute', false);
      const scoped = await call(
        'delete',
        `/tasks/${taskId}/submissions/me/attachments/${attachment.id}`,
        cls.member,
      );
      const byId = await remove(attachment.id, cls.member);
      expect([byId.status, byId.body.code]).toEqual([scoped.status, scoped.body.code]);
    });

    it('answers 404 to the submitter once the task is hidden from members (start moved ahead)', async () => {
      await ctx.db.query(`UPDATE tasks SET start_at = now() + interval '1 day' WHERE id = $1`, [taskId]);
      const res = await remove(attachment.id, cls.member);
      expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
    });
  });

  it('answers 404 for an unknown id, 400 for a malformed one, 401 without a token', async () => {
    const unknown = await remove(randomUUID(), cls.owner);
    expect([unknown.status, unknown.body]).toEqual([404, error('NOT_FOUND')]);
    const malformed = await remove('not-a-uuid', cls.owner);
    expect([malformed.status, malformed.body]).toEqual([400, error('VALIDATION_ERROR')]);
    const anonymous = await remove(randomUUID(), null);
    expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
  });
});
