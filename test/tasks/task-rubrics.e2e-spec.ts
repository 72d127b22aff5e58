import { randomUUID } from 'node:crypto';
import { apiError, ISO_TIMESTAMP, UUID_PATTERN } from '../utils/expect';
import { choose, ESSAY_MAX_POINTS, ESSAY_RUBRIC, putRubric, RubricJson, sameRubric } from '../utils/rubrics';
import { putSubmission } from '../utils/submissions';
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
import { TestUser } from '../utils/users';

type Role = 'owner' | 'admin' | 'member' | 'outsider';

describe("rubrics: a task's criteria and levels", () => {
  const ctx = useTestApp();
  let room: ClassWithRoles;

  beforeAll(async () => {
    room = await createClassWithRoles(ctx);
  });

  const as = (role: Role): TestUser => room[role];
  const rubricPath = (taskId: string) => `/tasks/${taskId}/rubric`;
  const put = (taskId: string, user: TestUser | null, body: object, key?: string) => {
    const req = ctx.http.put(rubricPath(taskId));
    if (user) req.set('Authorization', user.auth);
    if (key) req.set('Idempotency-Key', key);
    return req.send(body);
  };
  const get = (taskId: string, user: TestUser | null) => {
    const req = ctx.http.get(rubricPath(taskId));
    return user ? req.set('Authorization', user.auth) : req;
  };
  const remove = (taskId: string, user: TestUser | null) => {
    const req = ctx.http.delete(rubricPath(taskId));
    return user ? req.set('Authorization', user.auth) : req;
  };
  const task = (): Promise<TaskJson> => createTask(ctx, room.classId, room.owner, { title: 'Essay' });
  const grade = (taskId: string, submissionId: string, body: object) =>
    ctx.http
      .patch(`/tasks/${taskId}/submissions/${submissionId}/grade`)
      .set('Authorization', room.owner.auth)
      .send(body);
  /** The member submits and the owner grades with `levels` of the rubric; answers the submission id. */
  async function assessed(taskId: string, levels: object[]): Promise<string> {
    const { id } = await putSubmission(ctx, taskId, room.member, 'my essay');
    await grade(taskId, id, { rubric: levels }).expect(200);
    return id;
  }
  const rubricRows = async (taskId: string) =>
    (
      await ctx.db.query(
        `SELECT (SELECT count(*)::int FROM rubric_criteria WHERE task_id = $1) AS criteria,
                (SELECT count(*)::int FROM rubric_levels l JOIN rubric_criteria c ON c.id = l.criterion_id
                  WHERE c.task_id = $1) AS levels,
                (SELECT rubric_max_points FROM tasks WHERE id = $1) AS max`,
        [taskId],
      )
    )[0];

  describe('access of every role', () => {
    it.each([
      ['OWNER', 'owner', 200],
      ['ADMIN', 'admin', 200],
      ['MEMBER', 'member', 403],
      ['a non-member', 'outsider', 403],
    ] as const)('PUT as %s (%s) answers %d', async (_role, who, status) => {
      const { id } = await task();
      const res = await put(id, as(who), ESSAY_RUBRIC);
      expect(res.status).toBe(status);
      if (status !== 200) {
        expect(res.body).toEqual(apiError('FORBIDDEN'));
        expect((await rubricRows(id)).criteria).toBe(0);
      }
    });

    it.each([
      ['OWNER', 'owner', 200],
      ['ADMIN', 'admin', 200],
      ['MEMBER', 'member', 200],
      ['a non-member', 'outsider', 403],
    ] as const)('GET as %s (%s) answers %d', async (_role, who, status) => {
      const { id } = await task();
      const rubric = await putRubric(ctx, id, room.owner);
      const res = await get(id, as(who));
      expect(res.status).toBe(status);
      expect(res.body).toEqual(status === 200 ? rubric : apiError('FORBIDDEN'));
    });

    it.each([
      ['OWNER', 'owner', 204],
      ['ADMIN', 'admin', 204],
      ['MEMBER', 'member', 403],
      ['a non-member', 'outsider', 403],
    ] as const)('DELETE as %s (%s) answers %d', async (_role, who, status) => {
      const { id } = await task();
      await putRubric(ctx, id, room.owner);
      const res = await remove(id, as(who));
      expect(res.status).toBe(status);
      if (status !== 204) expect(res.body).toEqual(apiError('FORBIDDEN'));
      expect((await rubricRows(id)).criteria).toBe(status === 204 ? 0 : 2);
    });

    it('answers 401 without a token on every route', async () => {
      const { id } = await task();
      for (const res of [await put(id, null, ESSAY_RUBRIC), await get(id, null), await remove(id, null)]) {
        expect([res.status, res.body]).toEqual([401, apiError('UNAUTHORIZED')]);
      }
    });

    it('lets OWNER and ADMIN write the rubric of a draft and of a scheduled task, which a MEMBER cannot see (404)', async () => {
      const draft = await createDraft(ctx, room.classId, room.owner, { title: 'Draft' });
      const scheduled = await createTask(ctx, room.classId, room.owner, { startAt: FUTURE });
      for (const { id } of [draft, scheduled]) {
        await putRubric(ctx, id, room.admin);
        await get(id, room.owner).expect(200);
        expect((await get(id, room.member)).body).toEqual(apiError('NOT_FOUND'));
      }
    });

    it('answers 404 for a task that does not exist or was deleted, and 400 for a task id that is not a UUID', async () => {
      const { id } = await task();
      await putRubric(ctx, id, room.owner);
      await ctx.http.delete(`/tasks/${id}`).set('Authorization', room.owner.auth).expect(204);
      for (const taskId of [UNKNOWN_ID, id]) {
        expect((await get(taskId, room.owner)).body).toEqual(apiError('NOT_FOUND'));
        expect((await put(taskId, room.owner, ESSAY_RUBRIC)).body).toEqual(apiError('NOT_FOUND'));
        expect((await remove(taskId, room.owner)).body).toEqual(apiError('NOT_FOUND'));
      }
      expect((await get('not-a-uuid', room.owner)).body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });

  describe('the rubric', () => {
    it('is 404 before it exists and after DELETE (a second DELETE is 404 too)', async () => {
      const { id } = await task();
      expect((await get(id, room.member)).body).toEqual(apiError('NOT_FOUND'));
      expect((await remove(id, room.owner)).body).toEqual(apiError('NOT_FOUND'));
      await putRubric(ctx, id, room.owner);
      await remove(id, room.owner).expect(204);
      expect((await get(id, room.owner)).status).toBe(404);
      expect((await remove(id, room.owner)).status).toBe(404);
      expect(await rubricRows(id)).toEqual({ criteria: 0, levels: 0, max: null });
    });

    it('answers server-made ids, criteria in the order given, levels by points (highest first), and maxPoints', async () => {
      const { id } = await task();
      const rubric = await putRubric(ctx, id, room.owner);
      expect(rubric).toEqual({
        taskId: id,
        criteria: [
          {
            id: expect.stringMatching(UUID_PATTERN),
            title: 'Argument',
            description: 'A clear thesis, supported',
            levels: [
              { id: expect.stringMatching(UUID_PATTERN), title: 'Strong', points: 5 },
              { id: expect.stringMatching(UUID_PATTERN), title: 'Fair', points: 3 },
              { id: expect.stringMatching(UUID_PATTERN), title: 'Weak', points: 1 },
            ],
          },
          {
            id: expect.stringMatching(UUID_PATTERN),
            title: 'Style',
            description: null,
            levels: [
              { id: expect.stringMatching(UUID_PATTERN), title: 'Polished', points: 4.5 },
              { id: expect.stringMatching(UUID_PATTERN), title: 'Rough', points: 0 },
            ],
          },
        ],
        maxPoints: ESSAY_MAX_POINTS,
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        updatedAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      expect((await get(id, room.member)).body).toEqual(rubric);
    });

    it('keeps equal points in the order given, and sums two-decimal points exactly', async () => {
      const { id } = await task();
      const rubric = await putRubric(ctx, id, room.owner, {
        criteria: [
          {
            title: 'A',
            levels: [
              { title: 'x', points: 0.1 },
              { title: 'y', points: 0.1 },
            ],
          },
          { title: 'B', levels: [{ title: 'z', points: 0.2 }] },
        ],
      });
      expect(rubric.criteria[0].levels.map((level) => level.title)).toEqual(['x', 'y']);
      expect(rubric.maxPoints).toBe(0.3);
    });

    it('shows hasRubric and maxPoints on every task read, for every role (lists: see tasks-query-count)', async () => {
      const { id } = await task();
      const other = await task();
      const reads = async (user: TestUser): Promise<TaskJson[]> => {
        const detail = (await ctx.http.get(`/tasks/${id}`).set('Authorization', user.auth).expect(200)).body;
        const list = (
          await ctx.http.get(`/classes/${room.classId}/tasks`).set('Authorization', user.auth).expect(200)
        ).body as TaskJson[];
        const mine = (await ctx.http.get('/tasks/mine').set('Authorization', user.auth).expect(200))
          .body as TaskJson[];
        return [detail, list.find((t) => t.id === id)!, mine.find((t) => t.id === id)!];
      };
      for (const user of [room.owner, room.admin, room.member]) {
        for (const read of await reads(user))
          expect(read).toMatchObject({ hasRubric: false, maxPoints: null });
      }
      const before = await ctx.http.get(`/tasks/${id}`).set('Authorization', room.member.auth).expect(200);
      await putRubric(ctx, id, room.owner);
      // The task's tag follows: a client holding the old one reads the task again.
      const after = await ctx.http
        .get(`/tasks/${id}`)
        .set('Authorization', room.member.auth)
        .set('If-None-Match', before.headers.etag)
        .expect(200);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      for (const user of [room.owner, room.admin, room.member]) {
        for (const read of await reads(user)) {
          expect(read).toMatchObject({ hasRubric: true, maxPoints: ESSAY_MAX_POINTS });
        }
      }
      const list = (
        await ctx.http
          .get(`/classes/${room.classId}/tasks`)
          .set('Authorization', room.member.auth)
          .expect(200)
      ).body as TaskJson[];
      expect(list.find((t) => t.id === other.id)).toMatchObject({ hasRubric: false, maxPoints: null });
      await remove(id, room.owner).expect(204);
      for (const read of await reads(room.member))
        expect(read).toMatchObject({ hasRubric: false, maxPoints: null });
    });
  });

  describe('validation', () => {
    const criterion = (levels = 1, fields: object = {}) => ({
      title: 'C',
      levels: Array.from({ length: levels }, (_, i) => ({ title: `L${i}`, points: i })),
      ...fields,
    });

    it.each([
      ['no body', {}],
      ['criteria not an array', { criteria: 'x' }],
      ['no criteria', { criteria: [] }],
      ['31 criteria', { criteria: Array.from({ length: 31 }, () => criterion()) }],
      ['a criterion that is not an object', { criteria: ['x'] }],
      ['no levels', { criteria: [criterion(0)] }],
      ['11 levels', { criteria: [criterion(11)] }],
      ['an empty criterion title', { criteria: [criterion(1, { title: '' })] }],
      ['a criterion title of 201', { criteria: [criterion(1, { title: 'x'.repeat(201) })] }],
      ['a description of 2001', { criteria: [criterion(1, { description: 'x'.repeat(2001) })] }],
      ['a criterion id that is not a UUID', { criteria: [criterion(1, { id: 'c1' })] }],
      ['an unknown criterion field', { criteria: [criterion(1, { weight: 2 })] }],
      ['an unknown top-level field', { criteria: [criterion()], name: 'x' }],
      ['an empty level title', { criteria: [{ title: 'C', levels: [{ title: '', points: 1 }] }] }],
      [
        'a level title of 101',
        { criteria: [{ title: 'C', levels: [{ title: 'x'.repeat(101), points: 1 }] }] },
      ],
      ['negative points', { criteria: [{ title: 'C', levels: [{ title: 'L', points: -1 }] }] }],
      ['points over 100,000', { criteria: [{ title: 'C', levels: [{ title: 'L', points: 100000.01 }] }] }],
      ['three decimals', { criteria: [{ title: 'C', levels: [{ title: 'L', points: 1.234 }] }] }],
      ['points as a string', { criteria: [{ title: 'C', levels: [{ title: 'L', points: '1' }] }] }],
      ['no points', { criteria: [{ title: 'C', levels: [{ title: 'L' }] }] }],
      [
        'a level id that is not a UUID',
        { criteria: [{ title: 'C', levels: [{ id: 1, title: 'L', points: 1 }] }] },
      ],
      [
        'an unknown level field',
        { criteria: [{ title: 'C', levels: [{ title: 'L', points: 1, color: 'red' }] }] },
      ],
    ])('refuses %s with 400 and writes nothing', async (_case, body) => {
      const { id } = await task();
      expect((await put(id, room.owner, body)).body).toEqual(apiError('VALIDATION_ERROR'));
      expect((await rubricRows(id)).criteria).toBe(0);
    });

    it('accepts the bounds: 30 criteria of 10 levels, titles of 200 and 100, a description of 2000, points 0 to 100,000', async () => {
      const { id } = await task();
      const body = {
        criteria: Array.from({ length: 30 }, (_, c) => ({
          title: `${c}`.padEnd(200, 'x'),
          description: 'd'.repeat(2000),
          levels: Array.from({ length: 10 }, (_, l) => ({
            title: `${l}`.padEnd(100, 'y'),
            points: l === 0 ? 100000 : l === 9 ? 0 : l + 0.25,
          })),
        })),
      };
      const rubric = await putRubric(ctx, id, room.owner, body);
      expect(rubric.criteria).toHaveLength(30);
      expect(rubric.criteria[29].levels).toHaveLength(10);
      expect(rubric.maxPoints).toBe(3_000_000);
      expect(await rubricRows(id)).toEqual({ criteria: 30, levels: 300, max: '3000000.00' });
    });

    it('refuses one id given twice (two criteria, or two levels anywhere) with 400', async () => {
      const { id } = await task();
      const rubric = await putRubric(ctx, id, room.owner);
      const [argument, style] = rubric.criteria;
      const twiceCriterion = sameRubric(rubric);
      twiceCriterion.criteria[1].id = argument.id;
      expect((await put(id, room.owner, twiceCriterion)).body).toEqual(apiError('VALIDATION_ERROR'));
      const twiceLevel = sameRubric(rubric);
      twiceLevel.criteria[1].levels[0].id = argument.levels[0].id;
      expect((await put(id, room.owner, twiceLevel)).body).toEqual(apiError('VALIDATION_ERROR'));
      const made = randomUUID();
      const twiceMadeUp = {
        criteria: [
          { ...ESSAY_RUBRIC.criteria[0], id: made },
          { ...style, id: made },
        ],
      };
      expect((await put(id, room.owner, twiceMadeUp)).body).toEqual(apiError('VALIDATION_ERROR'));
      expect((await get(id, room.owner)).body).toEqual(rubric);
    });
  });

  describe('replacing it', () => {
    it('keeps the ids the write names, gives new ones to the rest, and removes what is not listed', async () => {
      const { id } = await task();
      const first = await putRubric(ctx, id, room.owner);
      const [argument, style] = first.criteria;
      const second = await putRubric(ctx, id, room.owner, {
        criteria: [
          {
            id: style.id,
            title: 'Style and tone',
            levels: [{ id: style.levels[1].id, title: 'Rough', points: 1 }],
          },
          {
            id: argument.id.toUpperCase(),
            title: 'Argument',
            description: null,
            levels: [
              { id: argument.levels[0].id, title: 'Strong', points: 6 },
              { title: 'New', points: 2 },
            ],
          },
          { title: 'Sources', levels: [{ title: 'Cited', points: 2 }] },
        ],
      });
      expect(second.criteria.map((c) => [c.id, c.title])).toEqual([
        [style.id, 'Style and tone'],
        [argument.id, 'Argument'],
        [expect.stringMatching(UUID_PATTERN), 'Sources'],
      ]);
      expect(second.criteria[0].levels).toEqual([{ id: style.levels[1].id, title: 'Rough', points: 1 }]);
      expect(second.criteria[1].levels).toEqual([
        { id: argument.levels[0].id, title: 'Strong', points: 6 },
        { id: expect.stringMatching(UUID_PATTERN), title: 'New', points: 2 },
      ]);
      expect(second.criteria[1].description).toBeNull();
      expect(second.maxPoints).toBe(1 + 6 + 2);
      expect(second.createdAt).toBe(first.createdAt);
      expect(second.updatedAt >= first.updatedAt).toBe(true);
      expect(await rubricRows(id)).toEqual({ criteria: 3, levels: 4, max: '9.00' });
    });

    it('never stores an id the client made up, nor one of another task or criterion: those parts get new ids', async () => {
      const { id } = await task();
      const other = await task();
      const foreign = await putRubric(ctx, other.id, room.owner);
      const madeUp = randomUUID();
      const rubric = await putRubric(ctx, id, room.owner, {
        criteria: [
          {
            id: madeUp,
            title: 'Made up',
            levels: [{ id: foreign.criteria[0].levels[0].id, title: 'L', points: 1 }],
          },
          {
            id: foreign.criteria[1].id,
            title: 'Foreign',
            levels: [{ id: madeUp.replace(/.$/, '0'), title: 'M', points: 2 }],
          },
        ],
      });
      const ids = rubric.criteria.flatMap((c) => [c.id, ...c.levels.map((level) => level.id)]);
      const given = [
        madeUp,
        madeUp.replace(/.$/, '0'),
        foreign.criteria[0].levels[0].id,
        foreign.criteria[1].id,
      ];
      expect(ids.filter((value) => given.includes(value))).toEqual([]);
      // The other task's rubric is untouched.
      expect((await get(other.id, room.owner)).body).toEqual(foreign);

      // A level of this rubric named under another criterion is a new level there, and gone from its own.
      const [first, second] = rubric.criteria;
      const moved = await putRubric(ctx, id, room.owner, {
        criteria: [
          { id: first.id, title: first.title, levels: [{ title: 'Other', points: 0 }] },
          { id: second.id, title: second.title, levels: [...second.levels, { ...first.levels[0] }] },
        ],
      });
      expect(moved.criteria[1].levels.map((level) => level.id)).not.toContain(first.levels[0].id);
      expect(moved.criteria[0].levels.map((level) => level.id)).not.toContain(first.levels[0].id);
    });

    it('is replayed for a repeated Idempotency-Key (same ids, written once); the key with another body is 422', async () => {
      const { id } = await task();
      const key = `rubric-${randomUUID()}`;
      const first = await put(id, room.owner, ESSAY_RUBRIC, key).expect(200);
      const replay = await put(id, room.owner, ESSAY_RUBRIC, key).expect(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect((await get(id, room.owner)).body).toEqual(first.body);
      expect(await rubricRows(id)).toEqual({ criteria: 2, levels: 5, max: '9.50' });
      const other = await put(id, room.owner, { criteria: [ESSAY_RUBRIC.criteria[1]] }, key);
      expect([other.status, other.body]).toEqual([422, apiError('IDEMPOTENCY_KEY_REUSED')]);
      expect((await get(id, room.owner)).body).toEqual(first.body);
    });
  });

  describe('RUBRIC_IN_USE once a submission is assessed with it', () => {
    let taskId: string;
    let rubric: RubricJson;

    beforeEach(async () => {
      taskId = (await task()).id;
      rubric = await putRubric(ctx, taskId, room.owner);
      await assessed(taskId, [choose(rubric, 'Argument', 'Fair')]);
    });

    const inUse = async (body: object) => {
      const res = await put(taskId, room.owner, body);
      expect([res.status, res.body]).toEqual([409, apiError('RUBRIC_IN_USE')]);
      expect((await get(taskId, room.owner)).body).toEqual(rubric);
    };

    it('refuses to remove the used level, or the used criterion, and to change the used level points', async () => {
      const withoutLevel = sameRubric(rubric);
      withoutLevel.criteria[0].levels.splice(1, 1);
      await inUse(withoutLevel);
      await inUse({ criteria: [sameRubric(rubric).criteria[1]] });
      const repointed = sameRubric(rubric);
      repointed.criteria[0].levels[1].points = 2;
      await inUse(repointed);
      // The used level named under the other criterion is a new level there: the used one is removed.
      const moved = sameRubric(rubric);
      moved.criteria[1].levels.push(moved.criteria[0].levels.splice(1, 1)[0]);
      await inUse(moved);
      // Without ids everything is new, so the used parts would go.
      await inUse(ESSAY_RUBRIC);
    });

    it('refuses DELETE while an assessment uses it', async () => {
      const res = await remove(taskId, room.owner);
      expect([res.status, res.body]).toEqual([409, apiError('RUBRIC_IN_USE')]);
      expect((await get(taskId, room.owner)).body).toEqual(rubric);
      expect(
        (await ctx.http.get(`/tasks/${taskId}`).set('Authorization', room.owner.auth)).body,
      ).toMatchObject({
        hasRubric: true,
        maxPoints: ESSAY_MAX_POINTS,
      });
    });

    it('lets titles and descriptions change, and unused parts change or go', async () => {
      const body = sameRubric(rubric);
      body.criteria[0].title = 'Reasoning';
      body.criteria[0].description = null;
      body.criteria[0].levels[1].title = 'Adequate';
      body.criteria[0].levels[0].points = 10; // Strong: unused
      body.criteria[0].levels.splice(2, 1); // Weak: unused
      body.criteria.splice(1, 1); // Style: unused
      const changed = await putRubric(ctx, taskId, room.owner, body);
      expect(changed.criteria).toEqual([
        {
          id: rubric.criteria[0].id,
          title: 'Reasoning',
          description: null,
          levels: [
            { id: rubric.criteria[0].levels[0].id, title: 'Strong', points: 10 },
            { id: rubric.criteria[0].levels[1].id, title: 'Adequate', points: 3 },
          ],
        },
      ]);
      expect(changed.maxPoints).toBe(10);
    });

    it('lifts once the assessment is cleared', async () => {
      const [{ id: submissionId }] = await ctx.db.query(`SELECT id FROM submissions WHERE task_id = $1`, [
        taskId,
      ]);
      await grade(taskId, submissionId, { rubric: [] }).expect(200);
      await putRubric(ctx, taskId, room.owner, {
        criteria: [{ title: 'Only', levels: [{ title: 'L', points: 1 }] }],
      });
      await remove(taskId, room.owner).expect(204);
    });

    it('is a rule of the database: a used level or criterion cannot be deleted, nor its points changed, by any statement', async () => {
      const level = rubric.criteria[0].levels[1];
      for (const sql of [
        `DELETE FROM rubric_levels WHERE id = '${level.id}'`,
        `UPDATE rubric_levels SET points = points + 1 WHERE id = '${level.id}'`,
        `UPDATE rubric_levels SET criterion_id = '${rubric.criteria[1].id}' WHERE id = '${level.id}'`,
        `DELETE FROM rubric_criteria WHERE id = '${rubric.criteria[0].id}'`,
        `DELETE FROM task_rubrics WHERE task_id = '${taskId}'`,
      ]) {
        await expect(ctx.db.query(sql)).rejects.toThrow(/foreign key constraint "fk_rubric_assessments_/);
      }
      // Deleting the whole task takes its submissions and their assessments with it.
      await ctx.db.query(`DELETE FROM tasks WHERE id = $1`, [taskId]);
      expect(await rubricRows(taskId)).toEqual({ criteria: 0, levels: 0, max: null });
    });
  });
});
