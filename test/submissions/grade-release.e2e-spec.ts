import { randomBytes } from 'node:crypto';
import { apiError, ISO_TIMESTAMP } from '../utils/expect';
import { inbox, notificationsOfTask, setPref, useAppWithChannelFakes, waitFor } from '../utils/notifications';
import { putSubmission, seedMembers, seedSubmissions, SubmissionJson } from '../utils/submissions';
import {
  ClassWithRoles,
  createClassWithRoles,
  createTask,
  TaskFields,
  TaskJson,
  UNKNOWN_ID,
} from '../utils/tasks';
import { TestUser } from '../utils/users';

const BOT_TOKEN = '123456:TEST-token';

/** The grade fields a MEMBER sees while the grade is unreleased. */
const HIDDEN_GRADE = { score: null, feedback: null, reviewerId: null, reviewedAt: null, isExemplary: false };

describe('submissions: grade release (when a submitter sees their grade)', () => {
  const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes(() => ({
    MAIL_FROM: 'Classroom Tasks <noreply@classroom.test>',
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
  }));
  let room: ClassWithRoles;

  beforeAll(async () => {
    room = await createClassWithRoles(ctx, { member: 'Asia/Shanghai' });
  });

  const call = (method: 'get' | 'put' | 'post' | 'patch', path: string, user?: TestUser, body?: object) => {
    const req = ctx.http[method](path);
    if (user) req.set('Authorization', user.auth);
    return body === undefined ? req : req.send(body);
  };
  const release = (taskId: string, user: TestUser | undefined, body: object = {}) =>
    call('post', `/tasks/${taskId}/grades/release`, user, body);
  const grade = (taskId: string, submissionId: string, body: object, grader: TestUser = room.owner) =>
    call('patch', `/tasks/${taskId}/submissions/${submissionId}/grade`, grader, body);
  const mine = async (taskId: string, user: TestUser): Promise<SubmissionJson> =>
    (await call('get', `/tasks/${taskId}/submissions/me`, user).expect(200)).body;
  const patchTask = (taskId: string, body: object, user: TestUser = room.owner) =>
    call('patch', `/tasks/${taskId}`, user, body);

  const task = (fields: TaskFields = {}): Promise<TaskJson> =>
    createTask(ctx, room.classId, room.owner, { title: 'Essay', ...fields });
  const manualTask = () => task({ gradeRelease: 'MANUAL' });

  /** `user` submits to the task and the owner grades it (score 80); answers the submission id. */
  async function submitGraded(taskId: string, user: TestUser, body: object = { score: 80 }): Promise<string> {
    const { id } = await putSubmission(ctx, taskId, user, 'my answer');
    await grade(taskId, id, body).expect(200);
    return id;
  }

  /** GRADE_RELEASED rows of a task, whatever their status. */
  const gradeNotices = async (taskId: string) =>
    (await notificationsOfTask(ctx, taskId)).filter((row) => row.type === 'GRADE_RELEASED');

  describe('gradeRelease on tasks', () => {
    it('defaults to IMMEDIATE and is accepted by create, drafts, publish and PATCH, and every task read returns it', async () => {
      expect((await task()).gradeRelease).toBe('IMMEDIATE');
      const manual = await manualTask();
      expect(manual.gradeRelease).toBe('MANUAL');

      const draft = (
        await call('post', `/classes/${room.classId}/tasks/drafts`, room.owner, {
          gradeRelease: 'MANUAL',
        }).expect(201)
      ).body as TaskJson;
      expect(draft.gradeRelease).toBe('MANUAL');
      const newest = await call('get', `/classes/${room.classId}/tasks/drafts/mine`, room.owner).expect(200);
      expect(newest.body.draft).toMatchObject({ id: draft.id, gradeRelease: 'MANUAL' });
      const published = await call('post', `/tasks/${draft.id}/publish`, room.owner, {
        title: 'Published',
        gradeRelease: 'IMMEDIATE',
      }).expect(200);
      expect(published.body.gradeRelease).toBe('IMMEDIATE');

      const patched = await patchTask(draft.id, { gradeRelease: 'MANUAL' }).expect(200);
      expect(patched.body.gradeRelease).toBe('MANUAL');
      for (const user of [room.owner, room.member]) {
        const detail = await call('get', `/tasks/${manual.id}`, user).expect(200);
        expect(detail.body.gradeRelease).toBe('MANUAL');
        const list = await call('get', `/classes/${room.classId}/tasks`, user).expect(200);
        expect(list.body.find((t: TaskJson) => t.id === draft.id).gradeRelease).toBe('MANUAL');
        const all = await call('get', '/tasks/mine', user).expect(200);
        expect(all.body.find((t: TaskJson) => t.id === manual.id).gradeRelease).toBe('MANUAL');
      }
    });

    it('refuses a value outside the enum, and null, on every write (400)', async () => {
      const { id } = await task();
      for (const gradeRelease of ['LATER', 'manual', null, 1]) {
        const body = { title: 'x', gradeRelease };
        expect(
          (await call('post', `/classes/${room.classId}/tasks`, room.owner, body).expect(400)).body,
        ).toEqual(apiError('VALIDATION_ERROR'));
        await call('post', `/classes/${room.classId}/tasks/drafts`, room.owner, body).expect(400);
        await call('post', `/tasks/${id}/publish`, room.owner, body).expect(400);
        await patchTask(id, { gradeRelease }).expect(400);
      }
      expect((await call('get', `/tasks/${id}`, room.owner).expect(200)).body.gradeRelease).toBe('IMMEDIATE');
    });
  });

  describe('IMMEDIATE', () => {
    it('shows the grade when given and announces it once; a regrade shows at once without a second notice', async () => {
      const { id: taskId } = await task();
      const submissionId = await submitGraded(taskId, room.member, { score: 70, feedback: 'Good' });
      const first = await mine(taskId, room.member);
      expect(first).toMatchObject({ score: 70, feedback: 'Good', reviewerId: room.owner.id });
      expect(first.releasedAt).toMatch(ISO_TIMESTAMP);

      await grade(taskId, submissionId, { score: 75, isExemplary: true }, room.admin).expect(200);
      const again = await mine(taskId, room.member);
      expect(again).toMatchObject({ score: 75, isExemplary: true, reviewerId: room.admin.id });
      expect(again.releasedAt).toBe(first.releasedAt);
      const notices = await gradeNotices(taskId);
      expect(notices.map((row) => row.user_id)).toEqual([room.member.id]);
    });

    it('needs a score or feedback: a review that sets neither releases nothing', async () => {
      const { id: taskId } = await task();
      const { id } = await putSubmission(ctx, taskId, room.member, 'x');
      const graded = await grade(taskId, id, { score: null }).expect(200);
      expect(graded.body.releasedAt).toBeNull();
      expect(await gradeNotices(taskId)).toEqual([]);
    });
  });

  describe('MANUAL', () => {
    it('hides the grade from the MEMBER submitter (GET and PUT) until released; OWNER and ADMIN see it', async () => {
      const { id: taskId } = await manualTask();
      const submissionId = await submitGraded(taskId, room.member, {
        score: 91.5,
        feedback: 'Well argued',
        isExemplary: true,
      });
      expect(await mine(taskId, room.member)).toMatchObject({ ...HIDDEN_GRADE, releasedAt: null });
      const byId = await call('get', `/submissions/${submissionId}`, room.member).expect(200);
      expect(byId.body).toMatchObject({ ...HIDDEN_GRADE, releasedAt: null });
      const put = await putSubmission(ctx, taskId, room.member, 'edited');
      expect(put).toMatchObject({ ...HIDDEN_GRADE, releasedAt: null, content: 'edited' });

      const graded = { score: 91.5, feedback: 'Well argued', isExemplary: true, reviewerId: room.owner.id };
      for (const manager of [room.owner, room.admin]) {
        const one = await call('get', `/tasks/${taskId}/submissions/${submissionId}`, manager).expect(200);
        expect(one.body).toMatchObject({ ...graded, releasedAt: null });
        const byIdOfManager = await call('get', `/submissions/${submissionId}`, manager).expect(200);
        expect(byIdOfManager.body).toMatchObject({ ...graded, releasedAt: null });
        const list = await call('get', `/tasks/${taskId}/submissions`, manager).expect(200);
        const entry = list.body.find((row: { userId: string }) => row.userId === room.member.id);
        expect(entry.submission).toMatchObject({ ...graded, releasedAt: null });
        const csv = await call('get', `/tasks/${taskId}/submissions/export`, manager).expect(200);
        expect(csv.text).toContain(',91.5');
      }
      expect(await gradeNotices(taskId)).toEqual([]);

      expect((await release(taskId, room.owner).expect(200)).body).toEqual({ released: 1 });
      const shown = await mine(taskId, room.member);
      expect(shown).toMatchObject({ ...graded, reviewedAt: expect.stringMatching(ISO_TIMESTAMP) });
      expect((await call('get', `/submissions/${submissionId}`, room.member).expect(200)).body).toEqual(
        shown,
      );
      expect(shown.releasedAt).toMatch(ISO_TIMESTAMP);

      // A grade changed after its release shows at once, and is not announced again.
      await grade(taskId, submissionId, { score: 60, feedback: null, isExemplary: false }).expect(200);
      expect(await mine(taskId, room.member)).toMatchObject({
        score: 60,
        feedback: null,
        releasedAt: shown.releasedAt,
      });
      expect((await release(taskId, room.admin).expect(200)).body).toEqual({ released: 0 });
      expect((await gradeNotices(taskId)).map((row) => row.user_id)).toEqual([room.member.id]);
    });

    it('shows OWNER and ADMIN submitters their own grade before release', async () => {
      const { id: taskId } = await manualTask();
      await submitGraded(taskId, room.admin, { score: 12 });
      await submitGraded(taskId, room.owner, { score: 13 });
      expect(await mine(taskId, room.admin)).toMatchObject({ score: 12, releasedAt: null });
      expect(await mine(taskId, room.owner)).toMatchObject({ score: 13, releasedAt: null });
    });

    it('releases only the given users, only graded submissions, and nothing for an empty list', async () => {
      const { id: taskId } = await manualTask();
      await submitGraded(taskId, room.member);
      await submitGraded(taskId, room.admin, { feedback: 'feedback only' });
      await putSubmission(ctx, taskId, room.owner, 'ungraded');

      expect((await release(taskId, room.owner, { userIds: [] }).expect(200)).body).toEqual({ released: 0 });
      const upper = room.member.id.toUpperCase();
      expect(
        (await release(taskId, room.owner, { userIds: [upper, room.outsider.id] }).expect(200)).body,
      ).toEqual({
        released: 1,
      });
      expect((await mine(taskId, room.member)).score).toBe(80);
      expect(await gradeNotices(taskId)).toHaveLength(1);

      expect((await release(taskId, room.owner).expect(200)).body).toEqual({ released: 1 });
      expect((await mine(taskId, room.owner)).releasedAt).toBeNull();
      expect((await gradeNotices(taskId)).map((row) => row.user_id).sort()).toEqual(
        [room.member.id, room.admin.id].sort(),
      );
    });

    it('MANUAL → IMMEDIATE releases every graded submission; IMMEDIATE → MANUAL keeps released grades visible', async () => {
      const { id: taskId } = await manualTask();
      const submissionId = await submitGraded(taskId, room.member);
      await submitGraded(taskId, room.admin);
      await patchTask(taskId, { gradeRelease: 'IMMEDIATE' }).expect(200);
      expect((await mine(taskId, room.member)).score).toBe(80);
      expect(await gradeNotices(taskId)).toHaveLength(2);

      await patchTask(taskId, { gradeRelease: 'MANUAL' }).expect(200);
      await grade(taskId, submissionId, { score: 99 }).expect(200);
      expect((await mine(taskId, room.member)).score).toBe(99);

      const other = await manualTask();
      await patchTask(other.id, { gradeRelease: 'IMMEDIATE' }).expect(200);
      await submitGraded(other.id, room.member, { score: 5 });
      await patchTask(other.id, { gradeRelease: 'MANUAL', title: 'Renamed' }).expect(200);
      expect((await mine(other.id, room.member)).score).toBe(5);
    });
  });

  describe('POST /tasks/:taskId/grades/release: access and validation', () => {
    it('answers OWNER and ADMIN; 403 for a MEMBER and a non-member, 404 for an unknown or hidden task, 401 without a token', async () => {
      const { id: taskId } = await manualTask();
      await submitGraded(taskId, room.member);
      expect((await release(taskId, room.member).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await release(taskId, room.outsider).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await release(UNKNOWN_ID, room.owner).expect(404)).body).toEqual(apiError('NOT_FOUND'));
      const draft = await call('post', `/classes/${room.classId}/tasks/drafts`, room.owner, {}).expect(201);
      expect((await release(draft.body.id, room.member).expect(404)).body).toEqual(apiError('NOT_FOUND'));
      expect((await release(draft.body.id, room.admin).expect(200)).body).toEqual({ released: 0 });
      expect((await release(taskId, undefined).expect(401)).body).toEqual(apiError('UNAUTHORIZED'));
      expect(await gradeNotices(taskId)).toEqual([]);
      expect((await release(taskId, room.admin).expect(200)).body).toEqual({ released: 1 });
    });

    it('refuses more than 1000 ids, malformed ids, a non-array, null and unknown fields (400)', async () => {
      const { id: taskId } = await manualTask();
      await submitGraded(taskId, room.member);
      const ids = (n: number) => Array.from({ length: n }, () => room.member.id);
      for (const body of [
        { userIds: ids(1001) },
        { userIds: ['not-a-uuid'] },
        { userIds: [room.member.id, 42] },
        { userIds: room.member.id },
        { userIds: null },
        { everyone: true },
      ]) {
        expect((await release(taskId, room.owner, body).expect(400)).body).toEqual(
          apiError('VALIDATION_ERROR'),
        );
      }
      expect(
        (await call('post', '/tasks/not-a-uuid/grades/release', room.owner, {}).expect(400)).body,
      ).toEqual(apiError('VALIDATION_ERROR'));
      expect((await mine(taskId, room.member)).releasedAt).toBeNull();
      expect((await release(taskId, room.owner, { userIds: ids(1000) }).expect(200)).body).toEqual({
        released: 1,
      });
    });
  });

  describe('GRADE_RELEASED', () => {
    it("reaches the inbox and every channel, with the release time in the recipient's time zone", async () => {
      const path = `/hook-${randomBytes(4).toString('hex')}`;
      const pref = await setPref(ctx, room.member, { channel: 'WEBHOOK', address: receiver.url(path) });
      receiver.setSecret(path, pref.secret!);
      const chatId = `-100${Date.now() % 1_000_000}`;
      await setPref(ctx, room.member, { channel: 'MESSENGER', address: chatId });

      const { id: taskId } = await task({ title: 'Lab report', gradeRelease: 'MANUAL' });
      await submitGraded(taskId, room.member);
      await release(taskId, room.owner).expect(200);

      const content = new RegExp(
        `^Your grade for "Lab report" in ${room.className} was released ` +
          '\\w{3} \\d{2} \\w{3} \\d{4} \\d{2}:\\d{2} \\(Asia/Shanghai\\)\\.$',
      );
      const item = await waitFor('GRADE_RELEASED in the inbox', async () =>
        (await inbox(ctx, room.member)).items.find(
          (entry) => entry.type === 'GRADE_RELEASED' && entry.taskId === taskId,
        ),
      );
      expect(item).toMatchObject({
        title: 'Grade released: Lab report',
        content: expect.stringMatching(content),
      });
      const [notice] = await gradeNotices(taskId);
      const releasedAt = new Date((await mine(taskId, room.member)).releasedAt!);
      const local = new Date(releasedAt.getTime() + 8 * 3600 * 1000);
      expect(notice.content).toContain(`${String(local.getUTCHours()).padStart(2, '0')}:`);

      const hook = await waitFor('webhook', async () =>
        receiver.received.find((hit) => {
          const body = hit.body as { type: string; data: { taskId: string } };
          return hit.path === path && body.type === 'GRADE_RELEASED' && body.data.taskId === taskId;
        }),
      );
      expect(hook.verified).toBe(true);
      expect(hook.body).toMatchObject({
        type: 'GRADE_RELEASED',
        data: { taskId, taskTitle: 'Lab report', classId: room.classId, className: room.className },
      });
      const message = await waitFor('messenger message', async () =>
        telegram.messages.find(
          (entry) => entry.chatId === chatId && entry.text.includes('Grade released: Lab report'),
        ),
      );
      expect(message.text).toMatch(/Asia\/Shanghai/);
      const mail = await waitFor('e-mail', async () =>
        smtp.messages.find(
          (entry) => entry.to.includes(room.member.email) && entry.subject === 'Grade released: Lab report',
        ),
      );
      expect(mail.text).toContain(item.content);
      expect(await gradeNotices(taskId)).toHaveLength(1);
    });
  });

  describe('concurrency', () => {
    it('a release racing a regrade: the submitter sees the latest grade, announced once', async () => {
      for (let round = 0; round < 6; round += 1) {
        const { id: taskId } = await manualTask();
        const submissionId = await submitGraded(taskId, room.member, { score: 10 });
        const [released] = await Promise.all([
          release(taskId, room.owner).expect(200),
          grade(taskId, submissionId, { score: 20 + round }, room.admin).expect(200),
        ]);
        expect(released.body).toEqual({ released: 1 });
        expect(await mine(taskId, room.member)).toMatchObject({
          score: 20 + round,
          reviewerId: room.admin.id,
        });
        expect(await gradeNotices(taskId)).toHaveLength(1);
      }
    });

    it('a switch to IMMEDIATE racing a first grade: the grade is released and announced once', async () => {
      for (let round = 0; round < 6; round += 1) {
        const { id: taskId } = await manualTask();
        const { id } = await putSubmission(ctx, taskId, room.member, 'answer');
        await Promise.all([
          patchTask(taskId, { gradeRelease: 'IMMEDIATE' }).expect(200),
          grade(taskId, id, { score: 30 + round }).expect(200),
        ]);
        const seen = await mine(taskId, room.member);
        expect(seen).toMatchObject({ score: 30 + round });
        expect(seen.releasedAt).toMatch(ISO_TIMESTAMP);
        expect(await gradeNotices(taskId)).toHaveLength(1);
      }
    });

    it('releases at once: the counts sum to the number of submissions, one notice each', async () => {
      const { id: taskId } = await manualTask();
      const members = await seedMembers(ctx, room.classId, 60, 'graded');
      await seedSubmissions(ctx, taskId, members);
      const answers = await Promise.all([
        release(taskId, room.owner).expect(200),
        release(taskId, room.admin).expect(200),
        release(taskId, room.owner, { userIds: members.slice(0, 30) }).expect(200),
        release(taskId, room.admin, { userIds: members.slice(20) }).expect(200),
      ]);
      expect(answers.reduce((sum, res) => sum + (res.body.released as number), 0)).toBe(60);
      const notices = await gradeNotices(taskId);
      expect(new Set(notices.map((row) => row.user_id)).size).toBe(60);
      expect(notices).toHaveLength(60);
    });
  });
});
