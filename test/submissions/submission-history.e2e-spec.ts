import { randomBytes, randomUUID } from 'node:crypto';
import { FileSweeper } from '../../src/files/file-sweeper';
import { listeningUrl, openStream } from '../utils/event-streams';
import { apiError, ISO_TIMESTAMP } from '../utils/expect';
import { downloadFile, storedFileKeys } from '../utils/files';
import { inbox, notificationsOfTask, setPref, useAppWithChannelFakes, waitFor } from '../utils/notifications';
import {
  putSubmission,
  seedTask,
  setDue,
  submissionWrites,
  SubmissionJson,
  uploadSubmissionAttachment,
} from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, UNKNOWN_ID } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { addMember } from '../utils/classes';
import { createUser, TestUser } from '../utils/users';

const BOT_TOKEN = '123456:TEST-token';
/** Small enough that two files of FILE_BYTES cannot both be stored. */
const QUOTA_BYTES = 1000;
const FILE_BYTES = 600;

interface VersionJson {
  version: number;
  content: string | null;
  attachments: { id: string; fileKey: string; url: string; originalName: string }[];
  submittedAt: string;
  isLate: boolean;
}

interface VersionsPage {
  versions: VersionJson[];
  nextCursor: string | null;
}

type Submission = SubmissionJson & { version: number; status: string };

describe('submissions: history and return for revision', () => {
  const { ctx, smtp, telegram, receiver } = useAppWithChannelFakes(() => ({
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    STORAGE_QUOTA_BYTES_PER_USER: String(QUOTA_BYTES),
  }));
  let room: ClassWithRoles;
  let classmate: TestUser;

  beforeAll(async () => {
    room = await createClassWithRoles(ctx, { member: 'Asia/Shanghai' });
    classmate = await createUser(ctx, { nickname: 'Classmate' });
    await addMember(ctx, room.classId, classmate);
  });

  const versionsOf = (taskId: string, submissionId: string, user: TestUser | null, query = '') => {
    const req = ctx.http.get(`/tasks/${taskId}/submissions/${submissionId}/versions${query}`);
    return user ? req.set('Authorization', user.auth) : req;
  };
  async function versions(taskId: string, submissionId: string, user: TestUser = room.owner) {
    return ((await versionsOf(taskId, submissionId, user, '?limit=100').expect(200)).body as VersionsPage)
      .versions;
  }
  const returnIt = (taskId: string, submissionId: string, user: TestUser | null, body: object = {}) => {
    const req = ctx.http.post(`/tasks/${taskId}/submissions/${submissionId}/return`);
    return (user ? req.set('Authorization', user.auth) : req).send(body);
  };
  const put = (taskId: string, user: TestUser, content: string | null) =>
    ctx.http.put(`/tasks/${taskId}/submissions/me`).set('Authorization', user.auth).send({ content });
  const mine = async (taskId: string, user: TestUser = room.member): Promise<Submission> =>
    (await ctx.http.get(`/tasks/${taskId}/submissions/me`).set('Authorization', user.auth).expect(200))
      .body as Submission;
  /** The amend window of the current version is over (as if SUBMISSION_VERSION_WINDOW_SECONDS had passed). */
  const windowPassed = (submissionId: string) =>
    ctx.db.query(
      `UPDATE submissions SET version_started_at = version_started_at - interval '301 seconds' WHERE id = $1`,
      [submissionId],
    );
  const task = (fields: Parameters<typeof seedTask>[2] = {}) =>
    seedTask(ctx, room.classId, { title: `Essay ${randomBytes(2).toString('hex')}`, ...fields });
  const file = (name: string) => ({ name, content: Buffer.alloc(FILE_BYTES, name) });

  describe('versions', () => {
    it('a write within the amend window amends the current version; a later one makes the next', async () => {
      const taskId = await task();
      const first = (await put(taskId, room.member, 'draft').expect(200)).body as Submission;
      expect(first).toMatchObject({ version: 1, status: 'SUBMITTED' });
      const amended = (await put(taskId, room.member, 'draft, amended').expect(200)).body as Submission;
      expect(amended).toMatchObject({ version: 1, status: 'SUBMITTED' });
      expect(await versions(taskId, first.id)).toEqual([
        {
          version: 1,
          content: 'draft, amended',
          attachments: [],
          submittedAt: amended.lastUpdatedAt,
          isLate: false,
        },
      ]);

      await windowPassed(first.id);
      const second = (await put(taskId, room.member, 'final').expect(200)).body as Submission;
      expect(second).toMatchObject({
        version: 2,
        status: 'SUBMITTED',
        firstSubmittedAt: first.firstSubmittedAt,
      });
      expect((await versions(taskId, first.id)).map((v) => [v.version, v.content])).toEqual([
        [2, 'final'],
        [1, 'draft, amended'],
      ]);
      // The list of the grader shows the version and status; the ids of both reads agree.
      const entry = (
        await ctx.http.get(`/tasks/${taskId}/submissions`).set('Authorization', room.owner.auth).expect(200)
      ).body.find((row: { userId: string }) => row.userId === room.member.id);
      expect(entry.submission).toMatchObject({ id: first.id, version: 2, status: 'SUBMITTED' });
    });

    it('attachments: each version lists what it held; a removed file an older version holds stays readable, swept never, and counted against the quota', async () => {
      const taskId = await task();
      const kept = await uploadSubmissionAttachment(ctx, taskId, room.member, file('a.txt'));
      const { id } = await mine(taskId);
      await windowPassed(id);
      const writes = submissionWrites(ctx, taskId, room.member);
      await writes.remove(kept.id).expect(204);
      expect(await mine(taskId)).toMatchObject({ version: 2, attachments: [] });

      const history = await versions(taskId, id);
      expect(history.map((v) => [v.version, v.attachments.map((a) => a.id)])).toEqual([
        [2, []],
        [1, [kept.id]],
      ]);
      expect(history[1].attachments[0]).toMatchObject({
        fileKey: kept.fileKey,
        url: `/files/${kept.fileKey}`,
      });

      // Still stored and readable by the submitter and the teachers; not by a classmate.
      await downloadFile(ctx, kept.url, room.member).expect(200);
      await downloadFile(ctx, kept.url, room.admin).expect(200);
      await downloadFile(ctx, kept.url, classmate).expect(403);
      await ctx.app.get(FileSweeper).sweep({ graceMs: 0 });
      expect(storedFileKeys(ctx)).toContain(kept.fileKey);

      // It counts against the quota: a second file of the same size does not fit.
      const refused = await ctx.http
        .post(`/tasks/${taskId}/submissions/me/attachments`)
        .set('Authorization', room.member.auth)
        .attach('file', file('b.txt').content, 'b.txt');
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(apiError('QUOTA_EXCEEDED'));

      // A file added and removed within one version was never held by another: it goes.
      const passing = await uploadSubmissionAttachment(ctx, taskId, room.admin, {
        name: 'p.txt',
        content: 'p',
      });
      await submissionWrites(ctx, taskId, room.admin).remove(passing.id).expect(204);
      expect(storedFileKeys(ctx)).not.toContain(passing.fileKey);
    });

    it('grading, release and refused writes make no version', async () => {
      const taskId = await task({ dueAt: '2020-01-01T00:00:00.000Z', allowLateSubmission: true });
      const { id } = await putSubmission(ctx, taskId, room.member, 'late work');
      await windowPassed(id);
      await ctx.http
        .patch(`/tasks/${taskId}/submissions/${id}/grade`)
        .set('Authorization', room.owner.auth)
        .send({ score: 7, feedback: 'ok' })
        .expect(200);
      await ctx.http
        .post(`/tasks/${taskId}/grades/release`)
        .set('Authorization', room.owner.auth)
        .expect(200);
      await setDue(ctx, taskId, '-1 hour', false);
      await put(taskId, room.member, 'refused').expect(403);
      const history = await versions(taskId, id);
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ version: 1, content: 'late work', isLate: true });
      expect(await mine(taskId)).toMatchObject({ version: 1, isLate: true, score: 7 });
    });

    it('pages newest first with the keyset cursor; a malformed cursor or limit is 400', async () => {
      const taskId = await task();
      const { id } = await putSubmission(ctx, taskId, room.member, 'v1');
      for (const content of ['v2', 'v3']) {
        await windowPassed(id);
        await putSubmission(ctx, taskId, room.member, content);
      }
      const first = (await versionsOf(taskId, id, room.member, '?limit=2').expect(200)).body as VersionsPage;
      expect(first.versions.map((v) => v.version)).toEqual([3, 2]);
      expect(first.nextCursor).toEqual(expect.any(String));
      const next = (
        await versionsOf(taskId, id, room.member, `?limit=2&cursor=${first.nextCursor}`).expect(200)
      ).body as VersionsPage;
      expect(next).toEqual({
        versions: [expect.objectContaining({ version: 1, content: 'v1' })],
        nextCursor: null,
      });

      for (const query of ['?cursor=not-a-cursor', '?cursor=%24%24', '?limit=0', '?limit=101', '?limit=x']) {
        const res = await versionsOf(taskId, id, room.member, query);
        expect([query, res.status, res.body]).toEqual([query, 400, apiError('VALIDATION_ERROR')]);
      }
    });

    it('every role: the submitter and OWNER/ADMIN read them; another member 403, outsider 403, no token 401, unknown 404', async () => {
      const taskId = await task();
      const { id } = await putSubmission(ctx, taskId, room.member, 'mine');
      for (const user of [room.member, room.owner, room.admin]) {
        await versionsOf(taskId, id, user).expect(200);
      }
      expect((await versionsOf(taskId, id, classmate).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await versionsOf(taskId, id, room.outsider).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await versionsOf(taskId, id, null).expect(401)).body).toEqual(apiError('UNAUTHORIZED'));
      expect((await versionsOf(taskId, UNKNOWN_ID, room.owner).expect(404)).body).toEqual(
        apiError('NOT_FOUND'),
      );
      const otherTask = await task();
      expect((await versionsOf(otherTask, id, room.owner).expect(404)).body).toEqual(apiError('NOT_FOUND'));
      expect((await versionsOf(taskId, 'nope', room.owner).expect(400)).body).toEqual(
        apiError('VALIDATION_ERROR'),
      );
    });
  });

  describe('return for revision', () => {
    it('lifts the deadline lock for one write, which makes a new version RESUBMITTED even inside the window; then the lock holds again', async () => {
      const taskId = await task();
      const { id } = await putSubmission(ctx, taskId, room.member, 'on time');
      // Submitted an hour ago; the deadline passed a minute ago.
      await ctx.db.query(
        `WITH earlier AS (
           UPDATE submissions SET first_submitted_at = first_submitted_at - interval '1 hour' WHERE id = $1)
         UPDATE submission_versions SET submitted_at = submitted_at - interval '1 hour' WHERE submission_id = $1`,
        [id],
      );
      await setDue(ctx, taskId, '-1 minute', false);
      expect((await put(taskId, room.member, 'too late').expect(403)).body).toEqual(
        apiError('LATE_SUBMISSION_CLOSED'),
      );

      const returned = await returnIt(taskId, id, room.owner, { feedback: 'Cite your sources' }).expect(200);
      expect(returned.body).toMatchObject({
        id,
        status: 'RETURNED',
        version: 1,
        feedback: 'Cite your sources',
        reviewerId: room.owner.id,
        reviewedAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      expect(await mine(taskId)).toMatchObject({ status: 'RETURNED', feedback: 'Cite your sources' });

      // Inside the amend window all the same: a new version.
      const resubmitted = (await put(taskId, room.member, 'revised').expect(200)).body as Submission;
      expect(resubmitted).toMatchObject({ version: 2, status: 'RESUBMITTED', isLate: false });
      expect((await put(taskId, room.member, 'again').expect(403)).body).toEqual(
        apiError('LATE_SUBMISSION_CLOSED'),
      );
      const upload = await submissionWrites(ctx, taskId, room.member).upload();
      expect([upload.status, upload.body]).toEqual([403, apiError('LATE_SUBMISSION_CLOSED')]);

      // The late flag keeps meaning "first submitted after the deadline"; the revised version was late.
      const history = await versions(taskId, id);
      expect(history.map((v) => [v.version, v.content, v.isLate])).toEqual([
        [2, 'revised', true],
        [1, 'on time', false],
      ]);

      // A RESUBMITTED one may be returned again; an upload is the write this time.
      await returnIt(taskId, id, room.admin).expect(200);
      const added = await submissionWrites(ctx, taskId, room.member).upload().expect(201);
      expect(await mine(taskId)).toMatchObject({ status: 'RESUBMITTED', version: 3 });
      const removal = await submissionWrites(ctx, taskId, room.member).remove(added.body.id);
      expect([removal.status, removal.body]).toEqual([403, apiError('LATE_SUBMISSION_CLOSED')]);
    });

    it('returning a RETURNED one is 409; without feedback the grade stays; every role and error', async () => {
      const taskId = await task();
      const { id } = await putSubmission(ctx, taskId, room.member, 'x');
      await ctx.http
        .patch(`/tasks/${taskId}/submissions/${id}/grade`)
        .set('Authorization', room.owner.auth)
        .send({ score: 5, feedback: 'first look' })
        .expect(200);
      expect((await returnIt(taskId, id, room.member).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await returnIt(taskId, id, room.outsider).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await returnIt(taskId, id, null).expect(401)).body).toEqual(apiError('UNAUTHORIZED'));
      expect((await returnIt(taskId, UNKNOWN_ID, room.owner).expect(404)).body).toEqual(
        apiError('NOT_FOUND'),
      );
      expect((await returnIt(await task(), id, room.owner).expect(404)).body).toEqual(apiError('NOT_FOUND'));
      for (const body of [{ feedback: 42 }, { feedback: 'x'.repeat(10_001) }, { other: true }]) {
        expect((await returnIt(taskId, id, room.owner, body).expect(400)).body).toEqual(
          apiError('VALIDATION_ERROR'),
        );
      }
      const returned = await returnIt(taskId, id, room.admin).expect(200);
      expect(returned.body).toMatchObject({
        status: 'RETURNED',
        score: 5,
        feedback: 'first look',
        reviewerId: room.owner.id,
      });
      expect((await returnIt(taskId, id, room.owner).expect(409)).body).toEqual(apiError('CONFLICT'));
      // feedback: null clears it.
      await putSubmission(ctx, taskId, room.member, 'y');
      expect((await returnIt(taskId, id, room.owner, { feedback: null }).expect(200)).body).toMatchObject({
        feedback: null,
      });
    });

    it('under MANUAL release the feedback of a return stays hidden from the submitter until released', async () => {
      const taskId = await task();
      await ctx.db.query(`UPDATE tasks SET grade_release = 'MANUAL' WHERE id = $1`, [taskId]);
      const { id } = await putSubmission(ctx, taskId, room.member, 'x');
      await returnIt(taskId, id, room.owner, { feedback: 'redo part 2' }).expect(200);
      expect(await mine(taskId)).toMatchObject({ status: 'RETURNED', feedback: null, releasedAt: null });
      await ctx.http
        .post(`/tasks/${taskId}/grades/release`)
        .set('Authorization', room.owner.auth)
        .expect(200);
      expect(await mine(taskId)).toMatchObject({ status: 'RETURNED', feedback: 'redo part 2' });
    });

    it('a keyed retry of a return answers the first answer and notifies once', async () => {
      const taskId = await task();
      const { id } = await putSubmission(ctx, taskId, room.member, 'x');
      const key = randomUUID();
      const send = () =>
        ctx.http
          .post(`/tasks/${taskId}/submissions/${id}/return`)
          .set('Authorization', room.owner.auth)
          .set('Idempotency-Key', key)
          .send({ feedback: 'again' });
      const first = await send().expect(200);
      const replay = await send().expect(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      const notices = (await notificationsOfTask(ctx, taskId)).filter(
        (n) => n.type === 'SUBMISSION_RETURNED',
      );
      expect(notices).toHaveLength(1);
    });

    it('two writes racing after a return past a closed deadline: exactly one gets through', async () => {
      for (let round = 0; round < 4; round += 1) {
        const taskId = await task();
        const { id } = await putSubmission(ctx, taskId, room.member, 'x');
        await setDue(ctx, taskId, '-1 minute', false);
        await returnIt(taskId, id, room.owner).expect(200);
        const writes = submissionWrites(ctx, taskId, room.member);
        const answers = await Promise.all([
          put(taskId, room.member, 'tab 1'),
          round % 2 ? writes.upload() : put(taskId, room.member, 'tab 2'),
        ]);
        const ok = answers.filter((res) => res.status < 300);
        expect(ok).toHaveLength(1);
        expect(answers.find((res) => res.status === 403)!.body).toEqual(apiError('LATE_SUBMISSION_CLOSED'));
        expect(await mine(taskId)).toMatchObject({ status: 'RESUBMITTED', version: 2 });
      }
    });
  });

  describe('SUBMISSION_RETURNED', () => {
    it('reaches the inbox, the live stream, every channel (signed webhook) and the delivery log', async () => {
      const path = `/hook-${randomBytes(4).toString('hex')}`;
      const pref = await setPref(ctx, room.member, { channel: 'WEBHOOK', address: receiver.url(path) });
      receiver.setSecret(path, pref.secret!);
      const chatId = `-100${Date.now() % 1_000_000}`;
      await setPref(ctx, room.member, { channel: 'MESSENGER', address: chatId });
      const stream = await openStream(await listeningUrl(ctx), {
        headers: { Authorization: room.member.auth },
      });
      try {
        const title = `Lab ${randomBytes(2).toString('hex')}`;
        const taskId = await task({ title });
        const { id } = await putSubmission(ctx, taskId, room.member, 'x');
        await returnIt(taskId, id, room.owner, { feedback: 'see comments' }).expect(200);

        const content = new RegExp(
          `^Your submission for "${title}" in ${room.className} was returned for revision ` +
            '\\w{3} \\d{2} \\w{3} \\d{4} \\d{2}:\\d{2} \\(Asia/Shanghai\\)\\. ' +
            'You can change it and submit it again, even after the deadline\\.$',
        );
        const item = await waitFor('SUBMISSION_RETURNED in the inbox', async () =>
          (await inbox(ctx, room.member)).items.find(
            (entry) => entry.type === 'SUBMISSION_RETURNED' && entry.taskId === taskId,
          ),
        );
        expect(item).toMatchObject({
          title: `Returned for revision: ${title}`,
          content: expect.stringMatching(content),
        });
        const live = await waitFor('the live event', async () =>
          stream.events.find((event) => event.type === 'notification' && event.id === item.id),
        );
        expect(live.data).toMatchObject({ type: 'SUBMISSION_RETURNED', taskId });

        const hook = await waitFor('webhook', async () =>
          receiver.received.find((hit) => {
            const body = hit.body as { type: string; data: { taskId: string } };
            return hit.path === path && body.type === 'SUBMISSION_RETURNED' && body.data.taskId === taskId;
          }),
        );
        expect(hook.verified).toBe(true);
        expect(hook.body).toMatchObject({
          type: 'SUBMISSION_RETURNED',
          data: { taskId, taskTitle: title, classId: room.classId, submissionId: id, version: 1 },
        });
        await waitFor('messenger message', async () =>
          telegram.messages.find(
            (entry) => entry.chatId === chatId && entry.text.includes(`Returned for revision: ${title}`),
          ),
        );
        await waitFor('e-mail', async () =>
          smtp.messages.find(
            (entry) =>
              entry.to.includes(room.member.email) && entry.subject === `Returned for revision: ${title}`,
          ),
        );
        const log = await ctx.http
          .get('/users/me/deliveries')
          .set('Authorization', room.member.auth)
          .expect(200);
        const logged = (log.body.items as { type: string; channel: string; notificationId: string }[]).filter(
          (entry) => entry.type === 'SUBMISSION_RETURNED' && entry.notificationId === item.id,
        );
        expect(logged.map((entry) => entry.channel).sort()).toEqual(['EMAIL', 'MESSENGER', 'WEBHOOK']);
        // The teacher who returned it is never notified.
        expect(
          (await inbox(ctx, room.owner)).items.filter((entry) => entry.type === 'SUBMISSION_RETURNED'),
        ).toEqual([]);
      } finally {
        stream.close();
      }
    });
  });
});

describe('submissions: versions when every write makes one (SUBMISSION_VERSION_WINDOW_SECONDS=0)', () => {
  let app: TestApp;
  let room: ClassWithRoles;

  beforeAll(async () => {
    app = await createTestApp({ SUBMISSION_VERSION_WINDOW_SECONDS: '0' });
    room = await createClassWithRoles(app);
  });
  afterAll(() => app?.close());

  it('two tabs writing at once never lose a write nor make two versions of one number', async () => {
    const taskId = await seedTask(app, room.classId);
    const { id } = await putSubmission(app, taskId, room.member, 'start');
    const writes = submissionWrites(app, taskId, room.member);
    const contents = Array.from({ length: 8 }, (_, n) => `tab ${n}`);
    const answers = await Promise.all([
      ...contents.map((content) =>
        app.http
          .put(`/tasks/${taskId}/submissions/me`)
          .set('Authorization', room.member.auth)
          .send({ content }),
      ),
      writes.upload(),
      writes.upload(),
    ]);
    expect(answers.map((res) => res.status).filter((status) => status >= 300)).toEqual([]);
    const rows: { version: number; content: string | null }[] = await app.db.query(
      `SELECT version, content FROM submission_versions WHERE submission_id = $1 ORDER BY version`,
      [id],
    );
    // One version per write, numbered 1..11 without a gap or a repeat.
    expect(rows.map((row) => row.version)).toEqual(Array.from({ length: 11 }, (_, n) => n + 1));
    // Every content write is some version's content; the last version's is the submission's.
    for (const content of contents) expect(rows.map((row) => row.content)).toContain(content);
    const [submission] = await app.db.query(`SELECT version, content FROM submissions WHERE id = $1`, [id]);
    expect(submission).toEqual(rows[rows.length - 1]);
    // Each PUT answered the version it made.
    const putVersions = answers.slice(0, 8).map((res) => (res.body as Submission).version);
    expect(new Set(putVersions).size).toBe(8);
  });
});
