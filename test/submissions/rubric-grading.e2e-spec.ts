import { randomUUID } from 'node:crypto';
import { waitForLockWaiters } from '../utils/database';
import { apiError } from '../utils/expect';
import { choose, putRubric, RubricJson, sameRubric } from '../utils/rubrics';
import { putSubmission, SubmissionJson } from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, createTask, TaskFields } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { TestUser } from '../utils/users';

type Role = 'owner' | 'admin' | 'member' | 'outsider';

describe('submissions: grading with a rubric', () => {
  const ctx = useTestApp();
  let room: ClassWithRoles;

  beforeAll(async () => {
    room = await createClassWithRoles(ctx);
  });

  const gradePath = (taskId: string, submissionId: string) =>
    `/tasks/${taskId}/submissions/${submissionId}/grade`;
  const grade = (
    taskId: string,
    submissionId: string,
    body: object,
    grader: TestUser | null = room.owner,
    key?: string,
  ) => {
    const req = ctx.http.patch(gradePath(taskId, submissionId));
    if (grader) req.set('Authorization', grader.auth);
    if (key) req.set('Idempotency-Key', key);
    return req.send(body);
  };
  const read = (path: string, user: TestUser) => ctx.http.get(path).set('Authorization', user.auth);

  /** A task with the essay rubric, and the member's submission to it. */
  async function assessable(
    fields: TaskFields = {},
  ): Promise<{ taskId: string; rubric: RubricJson; submissionId: string }> {
    const { id: taskId } = await createTask(ctx, room.classId, room.owner, { title: 'Essay', ...fields });
    const rubric = await putRubric(ctx, taskId, room.owner);
    const { id: submissionId } = await putSubmission(ctx, taskId, room.member, 'my essay');
    return { taskId, rubric, submissionId };
  }

  const storedAssessment = async (submissionId: string) =>
    ctx.db.query(
      `SELECT criterion_id, level_id, points, comment FROM rubric_assessments WHERE submission_id = $1
        ORDER BY criterion_id`,
      [submissionId],
    );
  const storedScore = async (submissionId: string): Promise<string | null> =>
    (await ctx.db.query(`SELECT score FROM submissions WHERE id = $1`, [submissionId]))[0].score;

  describe('the assessment', () => {
    it("scores the sum of the chosen levels' points and answers the assessment in the rubric's criterion order", async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const res = await grade(taskId, submissionId, {
        rubric: [choose(rubric, 'Style', 'Polished', 'Clean prose'), choose(rubric, 'Argument', 'Fair')],
      }).expect(200);
      const expected = [
        { ...choose(rubric, 'Argument', 'Fair'), points: 3, comment: null },
        { ...choose(rubric, 'Style', 'Polished'), points: 4.5, comment: 'Clean prose' },
      ];
      expect(res.body).toMatchObject({ score: 7.5, reviewerId: room.owner.id, rubricAssessment: expected });
      for (const path of [`/tasks/${taskId}/submissions/${submissionId}`, `/submissions/${submissionId}`]) {
        expect((await read(path, room.admin).expect(200)).body.rubricAssessment).toEqual(expected);
      }
      expect((await read(`/tasks/${taskId}/submissions/me`, room.member).expect(200)).body).toMatchObject({
        score: 7.5,
        rubricAssessment: expected,
      });
      const list = (await read(`/tasks/${taskId}/submissions`, room.owner).expect(200)).body;
      const entry = list.find((row: { userId: string }) => row.userId === room.member.id);
      expect(entry.submission).toMatchObject({ score: 7.5, rubricAssessment: expected });
      const others = list.filter((row: { userId: string; submission: unknown }) => row.submission === null);
      expect(others.length).toBeGreaterThan(0);
    });

    it('keeps an explicit score of the same request (a number or null), and may assess part of the criteria', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const explicit = await grade(taskId, submissionId, {
        score: 9,
        rubric: [choose(rubric, 'Argument', 'Weak')],
      }).expect(200);
      expect(explicit.body).toMatchObject({ score: 9, rubricAssessment: [{ points: 1 }] });
      const cleared = await grade(taskId, submissionId, {
        score: null,
        rubric: [choose(rubric, 'Argument', 'Strong')],
      }).expect(200);
      expect(cleared.body).toMatchObject({ score: null, rubricAssessment: [{ points: 5 }] });
      expect(await storedScore(submissionId)).toBeNull();
    });

    it('replaces the whole assessment with a new one; [] clears it and leaves the score', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      await grade(taskId, submissionId, {
        rubric: [choose(rubric, 'Argument', 'Strong', 'Good'), choose(rubric, 'Style', 'Rough')],
      }).expect(200);
      const replaced = await grade(taskId, submissionId, {
        rubric: [choose(rubric, 'Style', 'Polished')],
      }).expect(200);
      expect(replaced.body).toMatchObject({ score: 4.5, rubricAssessment: [{ points: 4.5, comment: null }] });
      expect(await storedAssessment(submissionId)).toHaveLength(1);
      const cleared = await grade(taskId, submissionId, { rubric: [] }).expect(200);
      expect(cleared.body).toMatchObject({ score: 4.5, rubricAssessment: null });
      expect(await storedAssessment(submissionId)).toEqual([]);
      // A grading without `rubric` leaves the assessment as it is.
      await grade(taskId, submissionId, { rubric: [choose(rubric, 'Style', 'Rough')] }).expect(200);
      const feedback = await grade(taskId, submissionId, { feedback: 'See comments' }).expect(200);
      expect(feedback.body).toMatchObject({
        score: 0,
        feedback: 'See comments',
        rubricAssessment: [{ points: 0 }],
      });
    });

    it('sets isExemplary with the score the levels give, in the same request', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const res = await grade(taskId, submissionId, {
        isExemplary: true,
        rubric: [choose(rubric, 'Argument', 'Strong')],
      }).expect(200);
      expect(res.body).toMatchObject({ score: 5, isExemplary: true });
      // Clearing leaves the score, so the mark may stay.
      await grade(taskId, submissionId, { rubric: [], isExemplary: true }).expect(200);
    });

    it('is null on submissions never assessed, and on a task without a rubric', async () => {
      const { id: taskId } = await createTask(ctx, room.classId, room.owner);
      const submission = await putSubmission(ctx, taskId, room.member, 'x');
      expect(submission.rubricAssessment).toBeNull();
      const graded = await grade(taskId, submission.id, { score: 3 }).expect(200);
      expect(graded.body.rubricAssessment).toBeNull();
    });
  });

  describe('refused gradings write nothing (400)', () => {
    let taskId: string;
    let rubric: RubricJson;
    let submissionId: string;
    let before: { assessment: unknown[]; score: string | null; reviewedAt: string };

    beforeAll(async () => {
      ({ taskId, rubric, submissionId } = await assessable());
      await grade(taskId, submissionId, {
        rubric: [choose(rubric, 'Argument', 'Fair')],
        feedback: 'ok',
      }).expect(200);
      const [{ reviewed_at }] = await ctx.db.query(`SELECT reviewed_at FROM submissions WHERE id = $1`, [
        submissionId,
      ]);
      before = {
        assessment: await storedAssessment(submissionId),
        score: await storedScore(submissionId),
        reviewedAt: reviewed_at,
      };
    });

    const refusedWith = async (body: object) => {
      const res = await grade(taskId, submissionId, body);
      expect([res.status, res.body]).toEqual([400, apiError('VALIDATION_ERROR')]);
      const [{ reviewed_at, feedback }] = await ctx.db.query(
        `SELECT reviewed_at, feedback FROM submissions WHERE id = $1`,
        [submissionId],
      );
      expect({
        assessment: await storedAssessment(submissionId),
        score: await storedScore(submissionId),
        reviewedAt: reviewed_at,
      }).toEqual(before);
      expect(feedback).toBe('ok');
    };

    it.each([
      ['rubric not an array', () => ({ rubric: 'x' })],
      ['rubric null', () => ({ rubric: null })],
      ['an entry not an object', () => ({ rubric: ['x'] })],
      [
        'a criterionId not a UUID',
        () => ({ rubric: [{ ...choose(rubric, 'Argument', 'Fair'), criterionId: 'c' }] }),
      ],
      ['no levelId', () => ({ rubric: [{ criterionId: rubric.criteria[0].id }] })],
      ['a comment of 2001', () => ({ rubric: [choose(rubric, 'Argument', 'Fair', 'x'.repeat(2001))] })],
      ['an unknown entry field', () => ({ rubric: [{ ...choose(rubric, 'Argument', 'Fair'), points: 3 }] })],
      [
        '31 entries',
        () => ({ rubric: Array.from({ length: 31 }, () => choose(rubric, 'Argument', 'Fair')) }),
      ],
      [
        'a criterion twice',
        () => ({ rubric: [choose(rubric, 'Argument', 'Fair'), choose(rubric, 'Argument', 'Strong')] }),
      ],
      [
        'an unknown criterion',
        () => ({ rubric: [{ ...choose(rubric, 'Argument', 'Fair'), criterionId: randomUUID() }] }),
      ],
      [
        'an unknown level',
        () => ({ rubric: [{ ...choose(rubric, 'Argument', 'Fair'), levelId: randomUUID() }] }),
      ],
      [
        'a level of another criterion',
        () => ({
          rubric: [{ ...choose(rubric, 'Argument', 'Fair'), levelId: rubric.criteria[1].levels[0].id }],
        }),
      ],
      [
        'a valid entry beside an unknown one, with a score',
        () => ({
          score: 50,
          rubric: [
            choose(rubric, 'Style', 'Rough'),
            { ...choose(rubric, 'Argument', 'Fair'), levelId: randomUUID() },
          ],
        }),
      ],
    ])('%s', async (_case, body) => {
      await refusedWith(body());
    });

    it('a criterion and level of another task’s rubric', async () => {
      const other = await assessable();
      await refusedWith({ rubric: [choose(other.rubric, 'Argument', 'Fair')] });
    });

    it('a rubric given for a task without one (even [])', async () => {
      const { id: bare } = await createTask(ctx, room.classId, room.owner);
      const { id } = await putSubmission(ctx, bare, room.member, 'x');
      for (const body of [
        { rubric: [choose(rubric, 'Argument', 'Fair')] },
        { rubric: [] },
        { rubric: [], score: 1 },
      ]) {
        const res = await grade(bare, id, body);
        expect([res.status, res.body]).toEqual([400, apiError('VALIDATION_ERROR')]);
      }
      expect(await storedScore(id)).toBeNull();
    });
  });

  describe('access of every role', () => {
    it.each([
      ['OWNER', 'owner', 200],
      ['ADMIN', 'admin', 200],
      ['MEMBER', 'member', 403],
      ['a non-member', 'outsider', 403],
    ] as const)('grading with a rubric as %s (%s) answers %d', async (_role, who: Role, status) => {
      const { taskId, rubric, submissionId } = await assessable();
      const res = await grade(
        taskId,
        submissionId,
        { rubric: [choose(rubric, 'Argument', 'Fair')] },
        room[who],
      );
      expect(res.status).toBe(status);
      if (status !== 200) expect(res.body).toEqual(apiError('FORBIDDEN'));
      expect(await storedAssessment(submissionId)).toHaveLength(status === 200 ? 1 : 0);
    });

    it('answers 401 without a token, 404 for a submission of another task', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const other = await assessable();
      const body = { rubric: [choose(rubric, 'Argument', 'Fair')] };
      expect((await grade(taskId, submissionId, body, null)).body).toEqual(apiError('UNAUTHORIZED'));
      expect((await grade(other.taskId, submissionId, body)).body).toEqual(apiError('NOT_FOUND'));
      expect(await storedAssessment(submissionId)).toEqual([]);
    });
  });

  describe('grade release hides the assessment as it hides the score', () => {
    const HIDDEN = {
      score: null,
      feedback: null,
      reviewerId: null,
      reviewedAt: null,
      isExemplary: false,
      rubricAssessment: null,
    };

    it('MANUAL: the MEMBER submitter sees null everywhere until release; OWNER and ADMIN always see it', async () => {
      const { taskId, rubric, submissionId } = await assessable({ gradeRelease: 'MANUAL' });
      await grade(taskId, submissionId, { rubric: [choose(rubric, 'Argument', 'Strong', 'Sharp')] }).expect(
        200,
      );
      const memberViews = async (): Promise<SubmissionJson[]> => [
        (await read(`/tasks/${taskId}/submissions/me`, room.member).expect(200)).body,
        (await read(`/submissions/${submissionId}`, room.member).expect(200)).body,
        (
          await ctx.http
            .put(`/tasks/${taskId}/submissions/me`)
            .set('Authorization', room.member.auth)
            .send({ content: 'revised' })
            .expect(200)
        ).body,
      ];
      for (const view of await memberViews()) expect(view).toMatchObject({ ...HIDDEN, releasedAt: null });
      // The grader's routes are the managers' alone; they show it.
      expect((await read(`/tasks/${taskId}/submissions/${submissionId}`, room.member)).status).toBe(403);
      const assessment = [{ ...choose(rubric, 'Argument', 'Strong'), points: 5, comment: 'Sharp' }];
      for (const grader of [room.owner, room.admin]) {
        expect(
          (await read(`/submissions/${submissionId}`, grader).expect(200)).body.rubricAssessment,
        ).toEqual(assessment);
        const list = (await read(`/tasks/${taskId}/submissions`, grader).expect(200)).body;
        expect(
          list.find((row: { userId: string }) => row.userId === room.member.id).submission.rubricAssessment,
        ).toEqual(assessment);
      }

      await ctx.http
        .post(`/tasks/${taskId}/grades/release`)
        .set('Authorization', room.owner.auth)
        .send({})
        .expect(200);
      for (const view of await memberViews())
        expect(view).toMatchObject({ score: 5, rubricAssessment: assessment });
    });

    it('an assessment alone (score: null) is a grade: hidden under MANUAL until released, shown at once under IMMEDIATE', async () => {
      const manual = await assessable({ gradeRelease: 'MANUAL' });
      await grade(manual.taskId, manual.submissionId, {
        score: null,
        rubric: [choose(manual.rubric, 'Style', 'Rough')],
      }).expect(200);
      expect(
        (await read(`/submissions/${manual.submissionId}`, room.member).expect(200)).body.rubricAssessment,
      ).toBeNull();
      const released = await ctx.http
        .post(`/tasks/${manual.taskId}/grades/release`)
        .set('Authorization', room.owner.auth)
        .send({})
        .expect(200);
      expect(released.body).toEqual({ released: 1 });
      expect((await read(`/submissions/${manual.submissionId}`, room.member).expect(200)).body).toMatchObject(
        {
          score: null,
          rubricAssessment: [{ points: 0 }],
        },
      );
      const [notice] = await ctx.db.query(
        `SELECT count(*)::int AS n FROM notifications WHERE type = 'GRADE_RELEASED' AND task_id = $1`,
        [manual.taskId],
      );
      expect(notice.n).toBe(1);

      const immediate = await assessable();
      await grade(immediate.taskId, immediate.submissionId, {
        score: null,
        rubric: [choose(immediate.rubric, 'Style', 'Rough')],
      }).expect(200);
      const shown = (await read(`/submissions/${immediate.submissionId}`, room.member).expect(200)).body;
      expect(shown).toMatchObject({ score: null, rubricAssessment: [{ points: 0 }] });
      expect(shown.releasedAt).not.toBeNull();
    });
  });

  describe('safe retries', () => {
    it('a repeated Idempotency-Key answers the first grading again and writes nothing twice', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const key = `grade-${randomUUID()}`;
      const body = { rubric: [choose(rubric, 'Argument', 'Fair')] };
      const first = await grade(taskId, submissionId, body, room.owner, key).expect(200);
      // Meanwhile another grading changes it: the replay must not write the first one again.
      await grade(taskId, submissionId, { rubric: [choose(rubric, 'Style', 'Rough')] }).expect(200);
      const replay = await grade(taskId, submissionId, body, room.owner, key).expect(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(await storedAssessment(submissionId)).toEqual([
        expect.objectContaining({ criterion_id: rubric.criteria[1].id, points: '0.00' }),
      ]);
    });

    it('a client that gives up while its grading waits: the retry is 409 until it commits, then its answer; one write', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const key = `grade-${randomUUID()}`;
      const body = { rubric: [choose(rubric, 'Argument', 'Strong')] };
      const runner = ctx.db.createQueryRunner();
      await runner.startTransaction();
      try {
        await runner.query(`SELECT 1 FROM submissions WHERE id = $1 FOR UPDATE`, [submissionId]);
        const givenUp = grade(taskId, submissionId, body, room.owner, key)
          .timeout(300)
          .then(
            () => 'answered',
            (error: Error) => error.message,
          );
        await waitForLockWaiters(ctx.db, 1);
        expect(await givenUp).toMatch(/timeout/i);
        const retry = await grade(taskId, submissionId, body, room.owner, key);
        expect([retry.status, retry.body]).toEqual([409, apiError('CONFLICT')]);
      } finally {
        await runner.commitTransaction();
        await runner.release();
      }
      let replay = await grade(taskId, submissionId, body, room.owner, key);
      for (let i = 0; replay.status === 409 && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        replay = await grade(taskId, submissionId, body, room.owner, key);
      }
      expect([replay.status, replay.headers['idempotent-replayed'], replay.body.score]).toEqual([
        200,
        'true',
        5,
      ]);
      expect(await storedAssessment(submissionId)).toHaveLength(1);
    });
  });

  describe('a rubric replacement racing an assessment (RUBRIC_IN_USE decided by the database)', () => {
    /** Assessments whose level is gone, moved to another criterion, or has other points than stored. */
    const dangling = async (): Promise<number> =>
      (
        await ctx.db.query(
          `SELECT count(*)::int AS n FROM rubric_assessments a
            WHERE NOT EXISTS (SELECT 1 FROM rubric_levels l
                               WHERE l.id = a.level_id AND l.criterion_id = a.criterion_id AND l.points = a.points)`,
        )
      )[0].n;

    const withoutLevel = (rubric: RubricJson, criterion: number, level: number) => {
      const body = sameRubric(rubric);
      body.criteria[criterion].levels.splice(level, 1);
      return body;
    };

    it('grading first: the replacement that removes the level it chose waits for it, then answers 409 RUBRIC_IN_USE', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const runner = ctx.db.createQueryRunner();
      await runner.startTransaction();
      let grading: Promise<{ status: number; body: SubmissionJson }>;
      let replacing: Promise<{ status: number; body: unknown }>;
      try {
        // The grading takes the task's share lock, then waits here for the submission row.
        await runner.query(`SELECT 1 FROM submissions WHERE id = $1 FOR UPDATE`, [submissionId]);
        grading = grade(taskId, submissionId, { rubric: [choose(rubric, 'Argument', 'Fair')] }).then(
          (r) => r,
        );
        await waitForLockWaiters(ctx.db, 1);
        replacing = ctx.http
          .put(`/tasks/${taskId}/rubric`)
          .set('Authorization', room.admin.auth)
          .send(withoutLevel(rubric, 0, 1))
          .then((r) => r);
        await waitForLockWaiters(ctx.db, 2);
      } finally {
        await runner.commitTransaction();
        await runner.release();
      }
      const [graded, replaced] = await Promise.all([grading!, replacing!]);
      expect(graded.status).toBe(200);
      expect(graded.body.rubricAssessment).toEqual([
        { ...choose(rubric, 'Argument', 'Fair'), points: 3, comment: null },
      ]);
      expect([replaced.status, replaced.body]).toEqual([409, apiError('RUBRIC_IN_USE')]);
      expect((await read(`/tasks/${taskId}/rubric`, room.owner).expect(200)).body).toEqual(rubric);
      expect(await dangling()).toBe(0);
    });

    it('replacement first: the grading that chose the removed level waits for it, then answers 400 and writes nothing', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const fair = choose(rubric, 'Argument', 'Fair');
      const runner = ctx.db.createQueryRunner();
      await runner.startTransaction();
      let grading: Promise<{ status: number; body: unknown }>;
      let replacing: Promise<{ status: number; body: RubricJson }>;
      try {
        // The replacement takes the task row, then waits here to delete the level.
        await runner.query(`SELECT 1 FROM rubric_levels WHERE id = $1 FOR UPDATE`, [fair.levelId]);
        replacing = ctx.http
          .put(`/tasks/${taskId}/rubric`)
          .set('Authorization', room.admin.auth)
          .send(withoutLevel(rubric, 0, 1))
          .then((r) => r);
        await waitForLockWaiters(ctx.db, 1);
        grading = grade(taskId, submissionId, { rubric: [fair] }).then((r) => r);
        await waitForLockWaiters(ctx.db, 2);
      } finally {
        await runner.commitTransaction();
        await runner.release();
      }
      const [replaced, graded] = await Promise.all([replacing!, grading!]);
      expect(replaced.status).toBe(200);
      expect(replaced.body.criteria[0].levels.map((level) => level.id)).not.toContain(fair.levelId);
      expect([graded.status, graded.body]).toEqual([400, apiError('VALIDATION_ERROR')]);
      expect(await storedAssessment(submissionId)).toEqual([]);
      expect(await storedScore(submissionId)).toBeNull();
      expect(await dangling()).toBe(0);
    });

    it('replacement first changing the points of an unused level: the grading that waited scores the new points', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const fair = choose(rubric, 'Argument', 'Fair');
      const body = sameRubric(rubric);
      body.criteria[0].levels[1].points = 4;
      const runner = ctx.db.createQueryRunner();
      await runner.startTransaction();
      let grading: Promise<{ status: number; body: SubmissionJson }>;
      let replacing: Promise<{ status: number }>;
      try {
        await runner.query(`SELECT 1 FROM rubric_levels WHERE id = $1 FOR UPDATE`, [fair.levelId]);
        replacing = ctx.http
          .put(`/tasks/${taskId}/rubric`)
          .set('Authorization', room.owner.auth)
          .send(body)
          .then((r) => r);
        await waitForLockWaiters(ctx.db, 1);
        grading = grade(taskId, submissionId, { rubric: [fair] }).then((r) => r);
        await waitForLockWaiters(ctx.db, 2);
      } finally {
        await runner.commitTransaction();
        await runner.release();
      }
      const [replaced, graded] = await Promise.all([replacing!, grading!]);
      expect(replaced.status).toBe(200);
      expect(graded.status).toBe(200);
      expect(graded.body).toMatchObject({
        score: 4,
        rubricAssessment: [{ levelId: fair.levelId, points: 4 }],
      });
      expect(await dangling()).toBe(0);
    });

    it('many concurrent gradings and replacements leave no assessment on a removed or re-pointed level', async () => {
      const { taskId, rubric, submissionId } = await assessable();
      const second = await putSubmission(ctx, taskId, room.admin, 'admin essay');
      const gradings = [submissionId, second.id].flatMap((id) =>
        ['Fair', 'Weak', 'Strong'].map((level) =>
          grade(taskId, id, { rubric: [choose(rubric, 'Argument', level)] }),
        ),
      );
      const replacements = [0, 1, 2].map((level) =>
        ctx.http
          .put(`/tasks/${taskId}/rubric`)
          .set('Authorization', room.owner.auth)
          .send(withoutLevel(rubric, 0, level)),
      );
      const answers = await Promise.all([...gradings, ...replacements]);
      for (const res of answers) expect([200, 400, 409]).toContain(res.status);
      expect(await dangling()).toBe(0);
      // The stored assessments name levels the rubric still has.
      const current = (await read(`/tasks/${taskId}/rubric`, room.owner).expect(200)).body as RubricJson;
      const levelIds = current.criteria.flatMap((c) => c.levels.map((level) => level.id));
      const stored = await ctx.db.query(`SELECT level_id FROM rubric_assessments WHERE task_id = $1`, [
        taskId,
      ]);
      for (const row of stored) expect(levelIds).toContain(row.level_id);
    });
  });
});
