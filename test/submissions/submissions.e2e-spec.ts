import { createHash, randomUUID } from 'node:crypto';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { apiError as error, ISO_TIMESTAMP as ISO } from '../utils/expect';
import { addMember, createClass } from '../utils/classes';
import { attachQueryCounter } from '../utils/query-counter';
import {
  putSubmission,
  seedTask,
  setDue,
  storedFileKeys,
  SubmissionJson,
  uploadSubmissionAttachment,
} from '../utils/submissions';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';

/** Small, so the 413 test sends little; every other upload here is a few bytes. */
const UPLOAD_MAX_BYTES = 64 * 1024;

describe('submissions', () => {
  const ctx = useTestApp({ UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES) });
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let member2: TestUser;
  let outsider: TestUser;
  let classId: string;
  let schoolId: string;

  const call = (method: 'get' | 'put' | 'post' | 'patch' | 'delete', path: string, user?: TestUser) => {
    const req = ctx.http[method](path);
    return user ? req.set('Authorization', user.auth) : req;
  };
  const getMine = (taskId: string, user: TestUser) => call('get', `/tasks/${taskId}/submissions/me`, user);
  const put = (taskId: string, user: TestUser, body: object) =>
    call('put', `/tasks/${taskId}/submissions/me`, user).send(body);
  const upload = (taskId: string, user: TestUser | undefined, name = 'answer.txt', content = 'answer') =>
    call('post', `/tasks/${taskId}/submissions/me/attachments`, user).attach('file', Buffer.from(content), {
      filename: name,
      contentType: 'text/plain',
    });
  const removeAttachment = (taskId: string, user: TestUser, attachmentId: string) =>
    call('delete', `/tasks/${taskId}/submissions/me/attachments/${attachmentId}`, user);
  const grade = (taskId: string, submissionId: string, user: TestUser | undefined, body: object) =>
    call('patch', `/tasks/${taskId}/submissions/${submissionId}/grade`, user).send(body);
  const list = (taskId: string, user: TestUser) => call('get', `/tasks/${taskId}/submissions`, user);

  type Route = { name: string; send: (user?: TestUser) => ReturnType<typeof call> };
  /** Every submission route of a task, with a submission and an attachment of it for the routes that name one. */
  const routesOf = (taskId: string, submissionId: string, attachmentId: string): Route[] => [
    { name: 'GET me', send: (user) => call('get', `/tasks/${taskId}/submissions/me`, user) },
    {
      name: 'PUT me',
      send: (user) => call('put', `/tasks/${taskId}/submissions/me`, user).send({ content: 'x' }),
    },
    { name: 'POST attachment', send: (user) => upload(taskId, user) },
    {
      name: 'DELETE attachment',
      send: (user) => call('delete', `/tasks/${taskId}/submissions/me/attachments/${attachmentId}`, user),
    },
    { name: 'GET list', send: (user) => call('get', `/tasks/${taskId}/submissions`, user) },
    {
      name: 'GET one',
      send: (user) => call('get', `/tasks/${taskId}/submissions/${submissionId}`, user),
    },
    { name: 'PATCH grade', send: (user) => grade(taskId, submissionId, user, { score: 1 }) },
    { name: 'GET export', send: (user) => call('get', `/tasks/${taskId}/submissions/export`, user) },
  ];

  beforeAll(async () => {
    await ctx.app.listen(0);
    [{ id: schoolId }] = await ctx.db.query(`INSERT INTO schools (name) VALUES ('Hill School') RETURNING id`);
    [owner, admin, member, member2, outsider] = await Promise.all([
      createUser(ctx, { nickname: 'Olivia', schoolId, studentId: 'T-1' }),
      createUser(ctx, { nickname: 'adam' }),
      createUser(ctx, { nickname: 'Mia', schoolId, studentId: 'S-42' }),
      createUser(ctx, { nickname: null, email: 'bob@example.com' }),
      createUser(ctx, { nickname: 'Outsider' }),
    ]);
    ({ id: classId } = await createClass(ctx, owner, { name: 'Physics 1' }));
    await addMember(ctx, classId, admin, ClassRole.ADMIN);
    await addMember(ctx, classId, member);
    await addMember(ctx, classId, member2);
  });

  describe('authentication and roles on every endpoint', () => {
    let taskId: string;
    let submissionId: string;
    let attachmentId: string;
    let routes: Route[];

    beforeAll(async () => {
      taskId = await seedTask(ctx, classId);
      submissionId = (await putSubmission(ctx, taskId, member, 'mine')).id;
      attachmentId = (await uploadSubmissionAttachment(ctx, taskId, member)).id;
      routes = routesOf(taskId, submissionId, attachmentId);
    });

    it('answers 401 UNAUTHORIZED without a token, or with a bad one', async () => {
      for (const route of routes) {
        const res = await route.send();
        expect([route.name, res.status, res.body]).toEqual([route.name, 401, error('UNAUTHORIZED')]);
      }
      const bad = await ctx.http.get(`/tasks/${taskId}/submissions/me`).set('Authorization', 'Bearer nope');
      expect([bad.status, bad.body]).toEqual([401, error('UNAUTHORIZED')]);
    });

    it('answers 403 FORBIDDEN to a user outside the class, on every endpoint, and keeps no uploaded file', async () => {
      const filesBefore = storedFileKeys(ctx).length;
      for (const route of routes) {
        const res = await route.send(outsider);
        expect([route.name, res.status, res.body]).toEqual([route.name, 403, error('FORBIDDEN')]);
      }
      expect(storedFileKeys(ctx)).toHaveLength(filesBefore);
      expect((await getMine(taskId, member).expect(200)).body.attachments).toHaveLength(1);
    });

    it('answers 403 FORBIDDEN to a MEMBER on the grader endpoints', async () => {
      for (const route of routes.filter((r) =>
        ['GET list', 'GET one', 'PATCH grade', 'GET export'].includes(r.name),
      )) {
        const res = await route.send(member);
        expect([route.name, res.status, res.body]).toEqual([route.name, 403, error('FORBIDDEN')]);
      }
    });

    it('answers 200 to OWNER and ADMIN on the grader endpoints', async () => {
      for (const user of [owner, admin]) {
        for (const route of routes.filter((r) =>
          ['GET list', 'GET one', 'PATCH grade', 'GET export'].includes(r.name),
        )) {
          const res = await route.send(user);
          expect([route.name, res.status]).toEqual([route.name, 200]);
        }
      }
    });

    it('answers 404 NOT_FOUND for a task that does not exist, and 400 for malformed ids', async () => {
      const unknown = randomUUID();
      for (const path of [
        `/tasks/${unknown}/submissions/me`,
        `/tasks/${unknown}/submissions`,
        `/tasks/${unknown}/submissions/export`,
      ]) {
        const res = await call('get', path, owner);
        expect([path, res.status, res.body]).toEqual([path, 404, error('NOT_FOUND')]);
      }
      expect((await put(unknown, member, { content: 'x' })).body).toEqual(error('NOT_FOUND'));
      for (const path of [
        '/tasks/not-a-uuid/submissions/me',
        `/tasks/${taskId}/submissions/not-a-uuid`,
        '/tasks/not-a-uuid/submissions/export',
      ]) {
        const res = await call('get', path, owner);
        expect([path, res.status, res.body]).toEqual([path, 400, error('VALIDATION_ERROR')]);
      }
      const res = await removeAttachment(taskId, member, 'nope');
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
    });

    it('decides access before reading the grade body or the second id of the path', async () => {
      const badBody = { score: 'x' };
      const routes = [
        (user: TestUser) => grade(taskId, submissionId, user, badBody),
        (user: TestUser) => grade(taskId, 'not-a-uuid', user, { score: 1 }),
        (user: TestUser) => call('get', `/tasks/${taskId}/submissions/not-a-uuid`, user),
      ];
      for (const [user, expected] of [
        [outsider, 403],
        [member, 403],
        [owner, 400],
      ] as const) {
        for (const send of routes) {
          const res = await send(user);
          expect([user.id, res.status, res.body.code]).toEqual([
            user.id,
            expected,
            expected === 403 ? 'FORBIDDEN' : 'VALIDATION_ERROR',
          ]);
        }
      }
      const res = await removeAttachment(taskId, outsider, 'not-a-uuid');
      expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      for (const [user, body, status, code] of [
        [outsider, {}, 403, 'FORBIDDEN'],
        [outsider, { content: 5, extra: true }, 403, 'FORBIDDEN'],
        [member, {}, 400, 'VALIDATION_ERROR'],
      ] as const) {
        const answer = await put(taskId, user, body);
        expect([answer.status, answer.body]).toEqual([status, error(code)]);
      }

      const deleted = await seedTask(ctx, classId);
      await ctx.db.query(`UPDATE tasks SET deleted_at = now() WHERE id = $1`, [deleted]);
      const draft = await seedTask(ctx, classId, { isPublished: false });
      for (const [id, user] of [
        [deleted, owner],
        [draft, member],
      ] as const) {
        const hidden = await grade(id, submissionId, user, badBody);
        expect([hidden.status, hidden.body]).toEqual([404, error('NOT_FOUND')]);
        const hiddenPut = await put(id, user, { content: 5 });
        expect([hiddenPut.status, hiddenPut.body]).toEqual([404, error('NOT_FOUND')]);
      }
    });

    it('keeps a valid PUT at one statement; only an invalid body asks for access', async () => {
      const counter = attachQueryCounter(ctx);
      try {
        await put(taskId, member, { content: 'warm the token cache' }).expect(200);
        const valid = await counter.record(() =>
          put(taskId, member, { content: 'one statement' }).expect(200),
        );
        expect(valid).toHaveLength(1);
        const invalid = await counter.record(() => put(taskId, member, { content: 5 }).expect(400));
        expect(invalid).toHaveLength(1);
      } finally {
        counter.detach();
      }
    });

    it('answers 404 on every route of a deleted task to every member, and of a draft or scheduled one to a MEMBER', async () => {
      const deleted = await seedTask(ctx, classId);
      const { id } = await putSubmission(ctx, deleted, member, 'kept');
      const attachment = await uploadSubmissionAttachment(ctx, deleted, member);
      await ctx.db.query(`UPDATE tasks SET deleted_at = now() WHERE id = $1`, [deleted]);
      const draft = await seedTask(ctx, classId, { isPublished: false });
      const scheduled = await seedTask(ctx, classId, {
        startAt: new Date(Date.now() + 86_400_000).toISOString(),
      });
      const filesBefore = storedFileKeys(ctx).length;
      for (const [taskId, users] of [
        [deleted, [owner, admin, member]],
        [draft, [member]],
        [scheduled, [member]],
      ] as const) {
        for (const user of users) {
          for (const route of routesOf(taskId, id, attachment.id)) {
            const res = await route.send(user);
            expect([route.name, res.status, res.body]).toEqual([route.name, 404, error('NOT_FOUND')]);
          }
        }
      }
      expect(storedFileKeys(ctx)).toHaveLength(filesBefore);
      // The soft-deleted task's submission stays as it was.
      expect(await ctx.db.query(`SELECT content, score FROM submissions WHERE id = $1`, [id])).toEqual([
        { content: 'kept', score: null },
      ]);
    });

    it('hides unpublished, scheduled and deleted tasks from a MEMBER (404)', async () => {
      const draft = await seedTask(ctx, classId, { isPublished: false });
      const scheduled = await seedTask(ctx, classId, {
        startAt: new Date(Date.now() + 86_400_000).toISOString(),
      });
      const deleted = await seedTask(ctx, classId);
      await ctx.db.query(`UPDATE tasks SET deleted_at = now() WHERE id = $1`, [deleted]);
      for (const id of [draft, scheduled, deleted]) {
        const res = await put(id, member, { content: 'x' });
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
      expect((await put(deleted, owner, { content: 'x' })).status).toBe(404);
      expect(
        await ctx.db.query(`SELECT 1 FROM submissions WHERE task_id = ANY($1)`, [
          [draft, scheduled, deleted],
        ]),
      ).toEqual([]);
    });
  });

  describe('my submission', () => {
    it('is 404 NOT_FOUND before the first submission, for every role', async () => {
      const taskId = await seedTask(ctx, classId);
      for (const user of [owner, admin, member]) {
        const res = await getMine(taskId, user);
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
    });

    it('is created by PUT and updated by the next PUT; firstSubmittedAt never changes', async () => {
      const taskId = await seedTask(ctx, classId);
      const created = await put(taskId, member, { content: '# Answer\n\n42 ✓' }).expect(200);
      expect(created.body).toEqual({
        id: expect.any(String),
        taskId,
        userId: member.id,
        content: '# Answer\n\n42 ✓',
        attachments: [],
        firstSubmittedAt: expect.stringMatching(ISO),
        lastUpdatedAt: created.body.firstSubmittedAt,
        score: null,
        feedback: null,
        reviewerId: null,
        reviewedAt: null,
        isExemplary: false,
        isLate: false,
        releasedAt: null,
        rubricAssessment: null,
        version: 1,
        status: 'SUBMITTED',
      });
      expect((await getMine(taskId, member).expect(200)).body).toEqual(created.body);

      const updated = await put(taskId, member, { content: 'second' }).expect(200);
      expect(updated.body).toEqual({
        ...created.body,
        content: 'second',
        lastUpdatedAt: expect.stringMatching(ISO),
      });
      expect(Date.parse(updated.body.lastUpdatedAt)).toBeGreaterThan(Date.parse(created.body.lastUpdatedAt));

      const cleared = await put(taskId, member, { content: null }).expect(200);
      expect(cleared.body).toMatchObject({
        id: created.body.id,
        content: null,
        firstSubmittedAt: created.body.firstSubmittedAt,
      });
      expect(
        await ctx.db.query(`SELECT count(*)::int AS n FROM submissions WHERE task_id = $1`, [taskId]),
      ).toEqual([{ n: 1 }]);
    });

    it('lets OWNER and ADMIN submit too, each their own', async () => {
      const taskId = await seedTask(ctx, classId);
      const mine = await put(taskId, owner, { content: 'owner' }).expect(200);
      const theirs = await put(taskId, admin, { content: 'admin' }).expect(200);
      expect(mine.body.userId).toBe(owner.id);
      expect(theirs.body.userId).toBe(admin.id);
      expect(theirs.body.id).not.toBe(mine.body.id);
    });

    it('validates the body', async () => {
      const taskId = await seedTask(ctx, classId);
      for (const body of [
        {},
        { content: 5 },
        { content: ['a'] },
        { content: 'x'.repeat(100_001) },
        { content: 'x', extra: 1 },
      ]) {
        const res = await put(taskId, member, body);
        expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      }
      const res = await call('put', `/tasks/${taskId}/submissions/me`, member)
        .set('Content-Type', 'application/json')
        .send('{"content":');
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      expect((await getMine(taskId, member)).status).toBe(404);
      expect((await put(taskId, member, { content: 'x'.repeat(100_000) })).status).toBe(200);
    });

    it('keeps one row under ten concurrent PUTs by one user', async () => {
      const taskId = await seedTask(ctx, classId);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => put(taskId, member, { content: `attempt ${i}` })),
      );
      expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
      const bodies = answers.map((res) => res.body as SubmissionJson);
      expect(new Set(bodies.map((body) => body.id)).size).toBe(1);
      expect(new Set(bodies.map((body) => body.firstSubmittedAt)).size).toBe(1);
      const rows = await ctx.db.query(
        `SELECT content, first_submitted_at FROM submissions WHERE task_id = $1 AND user_id = $2`,
        [taskId, member.id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].first_submitted_at.toISOString()).toBe(bodies[0].firstSubmittedAt);
      expect(bodies.map((body) => body.content)).toContain(rows[0].content);
    });
  });

  describe('first writes racing', () => {
    it('creates one row, counted once, when PUTs and uploads of one user race', async () => {
      const taskId = await seedTask(ctx, classId);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          i % 2 ? upload(taskId, member, `f${i}.txt`) : put(taskId, member, { content: `c${i}` }),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? 201 : 200)),
      );
      const rows = await ctx.db.query(
        `SELECT s.id, (SELECT count(*)::int FROM submission_attachments a WHERE a.submission_id = s.id) AS files
           FROM submissions s WHERE s.task_id = $1`,
        [taskId],
      );
      expect(rows).toEqual([{ id: expect.any(String), files: 5 }]);
      expect(
        await ctx.db.query(`SELECT submitted_count FROM task_submission_counts WHERE task_id = $1`, [taskId]),
      ).toEqual([{ submitted_count: 1 }]);
    });
  });

  describe('attachments', () => {
    it('round-trips: upload creates the submission, delete removes row and file, lastUpdatedAt moves', async () => {
      const taskId = await seedTask(ctx, classId);
      const uploaded = await upload(taskId, member, '作业 说明.pdf', 'hello bytes').expect(201);
      expect(uploaded.body).toEqual({
        id: expect.any(String),
        fileKey: expect.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
        originalName: '作业 说明.pdf',
        mimeType: 'text/plain',
        sizeBytes: 11,
        url: `/files/${uploaded.body.fileKey}`,
        createdAt: expect.stringMatching(ISO),
      });
      expect(storedFileKeys(ctx)).toContain(uploaded.body.fileKey);

      const created = (await getMine(taskId, member).expect(200)).body as SubmissionJson;
      expect(created).toMatchObject({ content: null, attachments: [uploaded.body], userId: member.id });

      const second = await upload(taskId, member, 'b.txt').expect(201);
      const afterSecond = (await getMine(taskId, member).expect(200)).body as SubmissionJson;
      expect(afterSecond.attachments.map((a) => a.id)).toEqual([uploaded.body.id, second.body.id]);
      expect(afterSecond.firstSubmittedAt).toBe(created.firstSubmittedAt);
      expect(Date.parse(afterSecond.lastUpdatedAt)).toBeGreaterThan(Date.parse(created.lastUpdatedAt));

      await removeAttachment(taskId, member, uploaded.body.id).expect(204);
      const afterDelete = (await getMine(taskId, member).expect(200)).body as SubmissionJson;
      expect(afterDelete.attachments).toEqual([second.body]);
      expect(Date.parse(afterDelete.lastUpdatedAt)).toBeGreaterThan(Date.parse(afterSecond.lastUpdatedAt));
      expect(storedFileKeys(ctx)).not.toContain(uploaded.body.fileKey);

      const again = await removeAttachment(taskId, member, uploaded.body.id);
      expect([again.status, again.body]).toEqual([404, error('NOT_FOUND')]);
    });

    it("cannot delete someone else's attachment (404) and answers 400 without a file", async () => {
      const taskId = await seedTask(ctx, classId);
      const theirs = await uploadSubmissionAttachment(ctx, taskId, member2);
      const res = await removeAttachment(taskId, member, theirs.id);
      expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      const otherTask = await seedTask(ctx, classId);
      expect((await removeAttachment(otherTask, member2, theirs.id)).status).toBe(404);
      expect(storedFileKeys(ctx)).toContain(theirs.fileKey);

      const noFile = await call('post', `/tasks/${taskId}/submissions/me/attachments`, member).field(
        'x',
        'y',
      );
      expect([noFile.status, noFile.body]).toEqual([400, error('VALIDATION_ERROR')]);
      const wrongField = await call('post', `/tasks/${taskId}/submissions/me/attachments`, member).attach(
        'other',
        Buffer.from('x'),
        'x.txt',
      );
      expect([wrongField.status, wrongField.body]).toEqual([400, error('VALIDATION_ERROR')]);
      expect((await getMine(taskId, member)).status).toBe(404);
    });

    it('answers 413 PAYLOAD_TOO_LARGE over UPLOAD_MAX_BYTES and keeps nothing', async () => {
      const taskId = await seedTask(ctx, classId);
      const filesBefore = storedFileKeys(ctx).length;
      const res = await call('post', `/tasks/${taskId}/submissions/me/attachments`, member).attach(
        'file',
        Buffer.alloc(UPLOAD_MAX_BYTES + 1, 1),
        'big.bin',
      );
      expect([res.status, res.body]).toEqual([413, error('PAYLOAD_TOO_LARGE')]);
      // The upload layer may answer before its cleanup of the cut-off file has finished.
      for (let i = 0; i < 50 && storedFileKeys(ctx).length > filesBefore; i++) await sleep(20);
      expect(storedFileKeys(ctx)).toHaveLength(filesBefore);
      expect((await getMine(taskId, member)).status).toBe(404);
      await call('post', `/tasks/${taskId}/submissions/me/attachments`, member)
        .attach('file', Buffer.alloc(UPLOAD_MAX_BYTES, 1), 'just-fits.bin')
        .expect(201);
    });
  });

  describe('attachment rules and downloads', () => {
    it('stores the name without control characters and refuses empty or over-long names', async () => {
      const taskId = await seedTask(ctx, classId);
      const filesBefore = storedFileKeys(ctx).length;
      const cleaned = await call('post', `/tasks/${taskId}/submissions/me/attachments`, member)
        .attach('file', Buffer.from('x'), { filename: ' report\t.md ', contentType: 'Text/Markdown' })
        .expect(201);
      expect(cleaned.body).toMatchObject({ originalName: 'report.md', mimeType: 'text/markdown' });
      for (const filename of ['x'.repeat(256), '\t']) {
        const res = await call('post', `/tasks/${taskId}/submissions/me/attachments`, member).attach(
          'file',
          Buffer.from('x'),
          filename,
        );
        expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      }
      await call('post', `/tasks/${taskId}/submissions/me/attachments`, member)
        .attach('file', Buffer.from('x'), 'y'.repeat(255))
        .expect(201);
      expect(storedFileKeys(ctx)).toHaveLength(filesBefore + 2);
    });

    /** A task where the member's submission already has `count` attachment rows (without files). */
    async function taskWithAttachments(count: number): Promise<string> {
      const taskId = await seedTask(ctx, classId);
      const { id } = await putSubmission(ctx, taskId, member, 'many files');
      await ctx.db.query(
        `INSERT INTO submission_attachments (submission_id, file_key, original_name)
         SELECT $1::uuid, 'seeded' || n || md5($1::text), 'f' || n FROM generate_series(1, $2) n`,
        [id, count],
      );
      return taskId;
    }

    it('holds at most 50 attachments per submission', async () => {
      const taskId = await taskWithAttachments(49);
      await upload(taskId, member).expect(201);
      const filesBefore = storedFileKeys(ctx).length;
      const res = await upload(taskId, member);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      expect(storedFileKeys(ctx)).toHaveLength(filesBefore);
      expect((await getMine(taskId, member).expect(200)).body.attachments).toHaveLength(50);
    });

    it('holds the bound under concurrent uploads, and keeps no file of a refused one', async () => {
      const taskId = await taskWithAttachments(47);
      const filesBefore = storedFileKeys(ctx).length;
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => upload(taskId, member, `r${i}.txt`)),
      );
      expect(answers.map((res) => res.status).sort()).toEqual([201, 201, 201, 400, 400, 400]);
      expect((await getMine(taskId, member).expect(200)).body.attachments).toHaveLength(50);
      expect(storedFileKeys(ctx)).toHaveLength(filesBefore + 3);
    });

    it('serves a submission file to its submitter and the class OWNER/ADMIN only', async () => {
      const taskId = await seedTask(ctx, classId);
      const file = await uploadSubmissionAttachment(ctx, taskId, member, {
        name: 'essay.txt',
        content: 'my essay',
      });
      for (const user of [member, owner, admin]) {
        const res = await call('get', file.url, user).buffer(true).expect(200);
        expect(res.text).toBe('my essay');
      }
      for (const user of [member2, outsider]) {
        const res = await call('get', file.url, user);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
      const anonymous = await call('get', file.url);
      expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
      await removeAttachment(taskId, member, file.id).expect(204);
      expect((await call('get', file.url, member)).status).toBe(404);
    });
  });

  describe('late rule', () => {
    it('refuses every write after dueAt when late submission is off, by the database clock', async () => {
      const taskId = await seedTask(ctx, classId);
      const attachment = await uploadSubmissionAttachment(ctx, taskId, member);
      await setDue(ctx, taskId, '-1 minute', false);
      const filesBefore = storedFileKeys(ctx).length;

      for (const user of [member, admin, owner]) {
        const res = await put(taskId, user, { content: 'late' });
        expect([res.status, res.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);
        const up = await upload(taskId, user);
        expect([up.status, up.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);
      }
      const del = await removeAttachment(taskId, member, attachment.id);
      expect([del.status, del.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);

      expect(storedFileKeys(ctx)).toHaveLength(filesBefore);
      const rows = await ctx.db.query(`SELECT user_id, content FROM submissions WHERE task_id = $1`, [
        taskId,
      ]);
      expect(rows).toEqual([{ user_id: member.id, content: null }]);
      expect((await getMine(taskId, member).expect(200)).body.attachments).toEqual([attachment]);
    });

    it('accepts writes after dueAt when late submission is on, and before dueAt when it is off', async () => {
      const lateAllowed = await seedTask(ctx, classId);
      await setDue(ctx, lateAllowed, '-1 minute', true);
      await put(lateAllowed, member, { content: 'late but fine' }).expect(200);
      const attachment = await upload(lateAllowed, member).expect(201);
      await removeAttachment(lateAllowed, member, attachment.body.id).expect(204);

      const notYetDue = await seedTask(ctx, classId);
      await setDue(ctx, notYetDue, '1 hour', false);
      await put(notYetDue, member, { content: 'in time' }).expect(200);
      await upload(notYetDue, member).expect(201);
    });

    it('ignores the application clock: only the database clock decides', async () => {
      const dueSoon = await seedTask(ctx, classId);
      await setDue(ctx, dueSoon, '1 day', false);
      const overdue = await seedTask(ctx, classId);
      await setDue(ctx, overdue, '-1 day', false);
      const fakeOnlyDate = {
        doNotFake: [
          'hrtime',
          'nextTick',
          'performance',
          'queueMicrotask',
          'setImmediate',
          'clearImmediate',
          'setInterval',
          'clearInterval',
          'setTimeout',
          'clearTimeout',
        ] as const,
        advanceTimers: true,
      };
      try {
        // The application believes it is two days later: the task due tomorrow still accepts.
        jest.useFakeTimers({
          ...fakeOnlyDate,
          doNotFake: [...fakeOnlyDate.doNotFake],
          now: Date.now() + 2 * 86_400_000,
        });
        await put(dueSoon, member, { content: 'db says in time' }).expect(200);
        // The application believes it is two days earlier: the task due yesterday still refuses.
        jest.useFakeTimers({
          ...fakeOnlyDate,
          doNotFake: [...fakeOnlyDate.doNotFake],
          now: Date.now() - 4 * 86_400_000,
        });
        const res = await put(overdue, member, { content: 'db says late' });
        expect([res.status, res.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('lock rule', () => {
    it('locks every write of a MEMBER until each existing blocker has a submission of theirs', async () => {
      const first = await seedTask(ctx, classId);
      const gone = await seedTask(ctx, classId);
      await ctx.db.query(`UPDATE tasks SET deleted_at = now() WHERE id = $1`, [gone]);
      const second = await seedTask(ctx, classId, { blockedBy: [first, gone] });

      const res = await put(second, member, { content: 'too early' });
      expect([res.status, res.body]).toEqual([403, error('TASK_LOCKED')]);
      const up = await upload(second, member);
      expect([up.status, up.body]).toEqual([403, error('TASK_LOCKED')]);
      expect((await getMine(second, member)).status).toBe(404);

      // Another member's submission does not unlock it for this one.
      await putSubmission(ctx, first, member2, 'theirs');
      expect((await put(second, member, { content: 'still early' })).status).toBe(403);

      await putSubmission(ctx, first, member, 'done first');
      await put(second, member, { content: 'now' }).expect(200);
      const attachment = await upload(second, member).expect(201);

      // A new blocker locks the attachment delete too.
      const third = await seedTask(ctx, classId);
      await ctx.db.query(`UPDATE tasks SET blocked_by = blocked_by || $2::uuid WHERE id = $1`, [
        second,
        third,
      ]);
      const del = await removeAttachment(second, member, attachment.body.id);
      expect([del.status, del.body]).toEqual([403, error('TASK_LOCKED')]);
      expect((await getMine(second, member).expect(200)).body.attachments).toHaveLength(1);
    });

    it('never locks OWNER or ADMIN', async () => {
      const first = await seedTask(ctx, classId);
      const second = await seedTask(ctx, classId, { blockedBy: [first] });
      for (const user of [owner, admin]) {
        await put(second, user, { content: 'managers are never locked' }).expect(200);
        const attachment = await upload(second, user).expect(201);
        await removeAttachment(second, user, attachment.body.id).expect(204);
      }
    });

    it('answers LATE_SUBMISSION_CLOSED before TASK_LOCKED when both apply', async () => {
      const first = await seedTask(ctx, classId);
      const second = await seedTask(ctx, classId, { blockedBy: [first] });
      await setDue(ctx, second, '-1 minute', false);
      const res = await put(second, member, { content: 'x' });
      expect([res.status, res.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);
    });
  });

  describe('grading', () => {
    let taskId: string;
    let submission: SubmissionJson;

    beforeAll(async () => {
      taskId = await seedTask(ctx, classId);
      submission = await putSubmission(ctx, taskId, member, 'grade me');
      await uploadSubmissionAttachment(ctx, taskId, member);
      submission = (await getMine(taskId, member)).body;
    });

    it('lets OWNER and ADMIN grade; sets reviewerId and reviewedAt; changes only the fields given', async () => {
      const before = Date.now();
      const graded = await grade(taskId, submission.id, owner, {
        score: 12.34,
        feedback: 'Good **work**',
      }).expect(200);
      expect(graded.body).toEqual({
        ...submission,
        score: 12.34,
        feedback: 'Good **work**',
        reviewerId: owner.id,
        reviewedAt: expect.stringMatching(ISO),
        // IMMEDIATE (the default): released when given.
        releasedAt: expect.stringMatching(ISO),
      });
      expect(Date.parse(graded.body.reviewedAt)).toBeGreaterThanOrEqual(before - 1000);

      const byAdmin = await grade(taskId, submission.id, admin, { feedback: 'Second look' }).expect(200);
      expect(byAdmin.body).toMatchObject({ score: 12.34, feedback: 'Second look', reviewerId: admin.id });
      expect(Date.parse(byAdmin.body.reviewedAt)).toBeGreaterThan(Date.parse(graded.body.reviewedAt));
      expect(byAdmin.body.lastUpdatedAt).toBe(submission.lastUpdatedAt);

      const asSeenByMember = (await getMine(taskId, member).expect(200)).body;
      expect(asSeenByMember).toEqual(byAdmin.body);
    });

    it('keeps scores with two decimals as JSON numbers, and null clears score and feedback', async () => {
      for (const [score, expected] of [
        [99.5, 99.5],
        [7.1, 7.1],
        [0, 0],
        [100000, 100000],
        [0.01, 0.01],
        [99999.99, 99999.99],
        [-0, 0],
      ]) {
        const res = await grade(taskId, submission.id, owner, { score }).expect(200);
        expect(res.body.score).toBe(expected);
      }
      const cleared = await grade(taskId, submission.id, owner, { score: null, feedback: null }).expect(200);
      expect(cleared.body).toMatchObject({ score: null, feedback: null, reviewerId: owner.id });
    });

    it('rejects invalid grades with 400 VALIDATION_ERROR', async () => {
      for (const body of [
        {},
        { score: 12.345 },
        { score: 0.001 },
        // Tiny values whose text has no '.' (class-validator's decimal check threw on them: 500).
        { score: 1e-7 },
        { score: 5e-324 },
        { score: -1 },
        { score: -0.01 },
        { score: 100000.01 },
        { score: '12' },
        { score: Number.MAX_VALUE },
        { feedback: 'x'.repeat(10_001) },
        { feedback: 5 },
        { isExemplary: null },
        { isExemplary: 'yes' },
        { score: 1, reviewerId: admin.id },
      ]) {
        const res = await grade(taskId, submission.id, owner, body);
        expect([JSON.stringify(body).slice(0, 40), res.status, res.body]).toEqual([
          JSON.stringify(body).slice(0, 40),
          400,
          error('VALIDATION_ERROR'),
        ]);
      }
      await grade(taskId, submission.id, owner, { feedback: 'x'.repeat(10_000) }).expect(200);
    });

    it('names the type before the range in its 400', async () => {
      for (const [body, message] of [
        [{ score: 'NaN' }, 'score must be a number'],
        [{ score: '12' }, 'score must be a number'],
        [{ score: 1.234 }, 'score must have at most 2 decimals'],
        [{ feedback: 5 }, 'feedback must be a string'],
      ] as const) {
        const res = await grade(taskId, submission.id, owner, body);
        expect([res.status, res.body.error]).toEqual([400, expect.stringContaining(message)]);
      }
      const res = await put(taskId, member, { content: { text: 'x' } });
      expect([res.status, res.body.error]).toEqual([
        400,
        expect.stringContaining('content must be a string'),
      ]);
    });

    it('needs a score, given or existing, for isExemplary: true', async () => {
      await grade(taskId, submission.id, owner, { score: null }).expect(200);
      const without = await grade(taskId, submission.id, owner, { isExemplary: true });
      expect([without.status, without.body]).toEqual([400, error('VALIDATION_ERROR')]);
      const withNullScore = await grade(taskId, submission.id, owner, { isExemplary: true, score: null });
      expect(withNullScore.status).toBe(400);

      const together = await grade(taskId, submission.id, owner, { isExemplary: true, score: 88 }).expect(
        200,
      );
      expect(together.body).toMatchObject({ isExemplary: true, score: 88 });
      // Clearing the score of an exemplary submission would leave it exemplary without a score.
      const clearing = await grade(taskId, submission.id, owner, { score: null });
      expect([clearing.status, clearing.body]).toEqual([400, error('VALIDATION_ERROR')]);
      await grade(taskId, submission.id, owner, { isExemplary: false, score: null }).expect(200);
      await grade(taskId, submission.id, owner, { score: 70 }).expect(200);
      const existing = await grade(taskId, submission.id, owner, { isExemplary: true }).expect(200);
      expect(existing.body).toMatchObject({ isExemplary: true, score: 70 });
    });

    it('answers 404 for a submission of another task or an unknown one', async () => {
      const otherTask = await seedTask(ctx, classId);
      const other = await putSubmission(ctx, otherTask, member, 'other');
      for (const [path, body] of [
        [`/tasks/${taskId}/submissions/${other.id}`, undefined],
        [`/tasks/${taskId}/submissions/${randomUUID()}`, undefined],
        [`/tasks/${taskId}/submissions/${other.id}/grade`, { score: 1 }],
        [`/tasks/${taskId}/submissions/${randomUUID()}/grade`, { score: 1 }],
      ] as const) {
        const res = body ? await call('patch', path, owner).send(body) : await call('get', path, owner);
        expect([path, res.status, res.body]).toEqual([path, 404, error('NOT_FOUND')]);
      }
      expect(
        (await ctx.db.query(`SELECT score FROM submissions WHERE id = $1`, [other.id]))[0].score,
      ).toBeNull();
    });

    it('keeps the grade when the submitter changes the submission afterwards, also when both race', async () => {
      const racedTask = await seedTask(ctx, classId);
      const first = await putSubmission(ctx, racedTask, member, 'draft');
      const graded = (await grade(racedTask, first.id, owner, { score: 50, feedback: 'ok' }).expect(200))
        .body as SubmissionJson;
      const changed = await put(racedTask, member, { content: 'improved' }).expect(200);
      expect(changed.body).toMatchObject({
        content: 'improved',
        score: 50,
        feedback: 'ok',
        reviewerId: owner.id,
      });
      expect(changed.body.reviewedAt).toBe(graded.reviewedAt);
      // lastUpdatedAt after reviewedAt tells the grader the submission changed since it was graded.
      expect(Date.parse(changed.body.lastUpdatedAt)).toBeGreaterThan(Date.parse(graded.reviewedAt!));

      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          i % 2
            ? grade(racedTask, first.id, admin, { score: i, feedback: `f${i}` })
            : put(racedTask, member, { content: `c${i}` }),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(Array(12).fill(200));
      const [row] = await ctx.db.query(`SELECT content, score, feedback FROM submissions WHERE id = $1`, [
        first.id,
      ]);
      // Neither write undoes the other: the last PUT's content and the last grade's score and feedback stay together.
      const lastGrade = Number(row.score);
      expect([lastGrade % 2, row.feedback, row.content]).toEqual([
        1,
        `f${lastGrade}`,
        expect.stringMatching(/^c\d+$/),
      ]);
    });

    it('shows OWNER and ADMIN the full submission by id', async () => {
      const mine = (await getMine(taskId, member).expect(200)).body;
      for (const user of [owner, admin]) {
        const res = await call('get', `/tasks/${taskId}/submissions/${submission.id}`, user).expect(200);
        expect(res.body).toEqual(mine);
        expect(res.body.attachments).toHaveLength(1);
      }
    });
  });

  describe("grader's list", () => {
    it('has one entry per member, non-submitters included, OWNER, ADMINs, MEMBERs each by display name', async () => {
      const taskId = await seedTask(ctx, classId);
      const extraAdmin = await createUser(ctx, { nickname: 'Zed' });
      const lowerMember = await createUser(ctx, { nickname: 'aaron' });
      await addMember(ctx, classId, extraAdmin, ClassRole.ADMIN);
      await addMember(ctx, classId, lowerMember);
      const submitted = await putSubmission(ctx, taskId, member, 'done');
      const attachment = await uploadSubmissionAttachment(ctx, taskId, member, {
        name: 'a.txt',
        content: 'abc',
      });
      await grade(taskId, submitted.id, admin, { score: 9.5, feedback: 'ok' }).expect(200);
      const graded = (await getMine(taskId, member).expect(200)).body as SubmissionJson;

      const res = await list(taskId, admin).expect(200);
      const summary: Partial<SubmissionJson> = { ...graded };
      delete summary.content;
      delete summary.attachments;
      const avatar = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
      const blank = {
        submitted: false,
        attachments: [],
        submission: null,
        schoolName: null,
        studentId: null,
      };
      expect(res.body).toEqual([
        {
          ...blank,
          userId: owner.id,
          nickname: 'Olivia',
          avatarHash: avatar(owner.email),
          role: 'OWNER',
          schoolName: 'Hill School',
          studentId: 'T-1',
        },
        { ...blank, userId: admin.id, nickname: 'adam', avatarHash: avatar(admin.email), role: 'ADMIN' },
        {
          ...blank,
          userId: extraAdmin.id,
          nickname: 'Zed',
          avatarHash: avatar(extraAdmin.email),
          role: 'ADMIN',
        },
        {
          ...blank,
          userId: lowerMember.id,
          nickname: 'aaron',
          avatarHash: avatar(lowerMember.email),
          role: 'MEMBER',
        },
        // No nickname: ordered by the e-mail "bob@example.com".
        {
          ...blank,
          userId: member2.id,
          nickname: null,
          avatarHash: avatar('bob@example.com'),
          role: 'MEMBER',
        },
        {
          userId: member.id,
          nickname: 'Mia',
          avatarHash: avatar(member.email),
          schoolName: 'Hill School',
          studentId: 'S-42',
          role: 'MEMBER',
          submitted: true,
          attachments: [attachment],
          submission: summary,
        },
      ]);
      expect(Object.keys(res.body[5].submission).sort()).toEqual(
        [
          'id',
          'taskId',
          'userId',
          'firstSubmittedAt',
          'lastUpdatedAt',
          'score',
          'feedback',
          'reviewerId',
          'reviewedAt',
          'isExemplary',
          'isLate',
          'releasedAt',
          'rubricAssessment',
          'version',
          'status',
        ].sort(),
      );
      expect((await list(taskId, owner).expect(200)).body).toEqual(res.body);
      await ctx.db.query(`DELETE FROM class_members WHERE class_id = $1 AND user_id = ANY($2)`, [
        classId,
        [extraAdmin.id, lowerMember.id],
      ]);
    });

    it('leaves out submissions of users who left the class', async () => {
      const taskId = await seedTask(ctx, classId);
      const leaver = await createUser(ctx, { nickname: 'Leaver' });
      await addMember(ctx, classId, leaver);
      await putSubmission(ctx, taskId, leaver, 'bye');
      await ctx.db.query(`DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`, [
        classId,
        leaver.id,
      ]);
      const res = await list(taskId, owner).expect(200);
      expect(res.body.map((entry: { userId: string }) => entry.userId)).toEqual([
        owner.id,
        admin.id,
        member2.id,
        member.id,
      ]);
    });
  });
});
