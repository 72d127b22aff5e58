import { apiError as error } from '../utils/expect';
import { raceAgainstTransaction } from '../utils/database';
import { useTestApp } from '../utils/test-app';
import {
  ClassWithRoles,
  createClassWithRoles,
  createDraft,
  createTask,
  FUTURE,
  ISO,
  taskApi,
  UNKNOWN_ID,
  TaskJson,
} from '../utils/tasks';

describe('tasks: creation, drafts, visibility, lists', () => {
  const ctx = useTestApp();
  let cls: ClassWithRoles;
  let other: ClassWithRoles;
  const { call, detail, listIds, submit } = taskApi(() => ctx);

  beforeAll(async () => {
    [cls, other] = await Promise.all([createClassWithRoles(ctx), createClassWithRoles(ctx)]);
  });
  describe('POST /classes/:classId/tasks', () => {
    it('creates a published task for the OWNER and answers the full TaskDetail', async () => {
      const before = Date.now();
      const res = await call('post', `/classes/${cls.classId}/tasks`, cls.owner, {
        title: '  Essay 1  ',
        description: '## Write\n\n300 words',
        startAt: '2020-01-01T08:00:00+08:00',
        dueAt: '2030-01-01T00:00:00Z',
        allowLateSubmission: false,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        classId: cls.classId,
        className: cls.className,
        title: 'Essay 1',
        startAt: '2020-01-01T00:00:00.000Z',
        dueAt: '2030-01-01T00:00:00.000Z',
        myDueAt: '2030-01-01T00:00:00.000Z',
        hasExtension: false,
        hasRubric: false,
        maxPoints: null,
        allowLateSubmission: false,
        gradeRelease: 'IMMEDIATE',
        blockedBy: [],
        createdBy: cls.owner.id,
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
        submittedCount: 0,
        memberCount: 3,
        userState: null,
        isPublished: true,
        publishedAt: expect.stringMatching(ISO),
        sourceText: null,
        isLocked: false,
        description: '## Write\n\n300 words',
        attachments: [],
        stats: { memberCount: 3, viewedCount: 0, submittedCount: 0 },
      });
      expect(Date.parse(res.body.publishedAt)).toBeGreaterThanOrEqual(before - 1000);
    });

    it('lets an ADMIN create, with defaults for the optional fields', async () => {
      const res = await call('post', `/classes/${cls.classId}/tasks`, cls.admin, { title: 'Minimal' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        startAt: null,
        dueAt: null,
        allowLateSubmission: true,
        blockedBy: [],
        description: null,
        createdBy: cls.admin.id,
        isPublished: true,
      });
    });

    it('refuses MEMBERs and non-members (403), unknown classes (404), missing tokens (401)', async () => {
      const body = { title: 'Nope' };
      expect((await call('post', `/classes/${cls.classId}/tasks`, cls.member, body)).body).toEqual(
        error('FORBIDDEN'),
      );
      const outsider = await call('post', `/classes/${cls.classId}/tasks`, cls.outsider, body);
      expect(outsider.status).toBe(403);
      expect(outsider.body).toEqual(error('FORBIDDEN'));
      expect((await call('post', `/classes/${UNKNOWN_ID}/tasks`, cls.owner, body)).body).toEqual(
        error('NOT_FOUND'),
      );
      const anonymous = await call('post', `/classes/${cls.classId}/tasks`, null, body);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(error('UNAUTHORIZED'));
      expect((await call('post', `/classes/not-a-uuid/tasks`, cls.owner, body)).body).toEqual(
        error('VALIDATION_ERROR'),
      );
    });

    it.each<[string, object]>([
      ['no title', {}],
      ['an empty title', { title: '' }],
      ['a blank title', { title: '   ' }],
      ['a title of 201 characters', { title: 'x'.repeat(201) }],
      ['a null title', { title: null }],
      ['a description over 100,000 characters', { title: 'T', description: 'x'.repeat(100_001) }],
      ['a timestamp without offset', { title: 'T', dueAt: '2030-01-01T10:00:00' }],
      ['a date only', { title: 'T', startAt: '2030-01-01' }],
      [
        'dueAt before startAt',
        { title: 'T', startAt: '2030-01-02T00:00:00Z', dueAt: '2030-01-01T00:00:00Z' },
      ],
      ['allowLateSubmission null', { title: 'T', allowLateSubmission: null }],
      ['allowLateSubmission as a string', { title: 'T', allowLateSubmission: 'yes' }],
      ['blockedBy with a non-UUID', { title: 'T', blockedBy: ['nope'] }],
      ['blockedBy null', { title: 'T', blockedBy: null }],
      ['blockedBy with an unknown task', { title: 'T', blockedBy: [UNKNOWN_ID] }],
      ['blockedBy with duplicates', { title: 'T', blockedBy: [UNKNOWN_ID, UNKNOWN_ID] }],
      [
        'blockedBy over 50 ids',
        {
          title: 'T',
          blockedBy: Array.from(
            { length: 51 },
            (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          ),
        },
      ],
      ['an unknown field', { title: 'T', points: 10 }],
      ['sourceText (drafts only)', { title: 'T', sourceText: 'x' }],
    ])('answers 400 for %s', async (_case, body) => {
      const res = await call('post', `/classes/${cls.classId}/tasks`, cls.owner, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
    });

    it('accepts 200-character titles, equal start and due times and 50 blockers', async () => {
      const at = '2030-01-01T00:00:00.000Z';
      await call('post', `/classes/${cls.classId}/tasks`, cls.owner, {
        title: 'x'.repeat(200),
        startAt: at,
        dueAt: at,
      }).expect(201);
      const [{ ids }] = await ctx.db.query(
        `WITH made AS (INSERT INTO tasks (class_id, title, is_published, published_at)
                       SELECT $1, 'blocker ' || g, true, now() FROM generate_series(1, 50) g RETURNING id)
         SELECT array_agg(id) AS ids FROM made`,
        [cls.classId],
      );
      const res = await call('post', `/classes/${cls.classId}/tasks`, cls.owner, {
        title: 'Capstone',
        blockedBy: ids,
      });
      expect(res.status).toBe(201);
      expect(res.body.blockedBy).toHaveLength(50);
      await ctx.db.query(`DELETE FROM tasks WHERE id = ANY($1::uuid[])`, [ids]);
    });

    it('refuses blockers of another class and deleted blockers', async () => {
      const foreign = await createTask(ctx, other.classId, other.owner);
      const res = await call('post', `/classes/${cls.classId}/tasks`, cls.owner, {
        title: 'T',
        blockedBy: [foreign.id],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
      const gone = await createTask(ctx, cls.classId, cls.owner);
      await ctx.db.query(`UPDATE tasks SET deleted_at = now() WHERE id = $1`, [gone.id]);
      expect(
        (await call('post', `/classes/${cls.classId}/tasks`, cls.owner, { title: 'T', blockedBy: [gone.id] }))
          .status,
      ).toBe(400);
    });

    it.each([
      ['POST /classes/:classId/tasks', ''],
      ['POST /classes/:classId/tasks/drafts', '/drafts'],
    ])('%s racing the deletion of the class: 404, not 500', async (_route, path) => {
      // The request passes the role check, then waits for the class row a deletion holds; the class is gone
      // when it goes on.
      const doomed = await createClassWithRoles(ctx);
      const res = await raceAgainstTransaction(
        ctx.db,
        [
          [`SELECT 1 FROM classes WHERE id = $1 FOR UPDATE`, [doomed.classId]],
          [`DELETE FROM classes WHERE id = $1`, [doomed.classId]],
        ],
        () => call('post', `/classes/${doomed.classId}/tasks${path}`, doomed.admin, { title: 'Late' }),
      );
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: error('NOT_FOUND') });
    });
  });

  describe('drafts', () => {
    it('creates drafts (201, unpublished, "Untitled Draft" by default) that no task list shows', async () => {
      const res = await call('post', `/classes/${cls.classId}/tasks/drafts`, cls.admin, {
        sourceText: 'Essay due Friday',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        title: 'Untitled Draft',
        isPublished: false,
        publishedAt: null,
        sourceText: 'Essay due Friday',
        createdBy: cls.admin.id,
        attachments: [],
        stats: { memberCount: 3, viewedCount: 0, submittedCount: 0 },
      });
      for (const user of [cls.owner, cls.admin, cls.member])
        expect(await listIds(cls.classId, user)).not.toContain(res.body.id);
      const mine = await call('get', '/tasks/mine', cls.admin).expect(200);
      expect(mine.body.map((t: TaskJson) => t.id)).not.toContain(res.body.id);
    });

    it('validates drafts like tasks, but allows an empty title', async () => {
      await call('post', `/classes/${cls.classId}/tasks/drafts`, cls.owner, { title: '' }).expect(201);
      for (const body of [
        { sourceText: 'x'.repeat(20_001) },
        { dueAt: 'tomorrow' },
        { blockedBy: [UNKNOWN_ID] },
        { title: null },
      ]) {
        const res = await call('post', `/classes/${cls.classId}/tasks/drafts`, cls.owner, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
    });

    it("GET drafts/mine answers the caller's newest draft of that class, or null", async () => {
      const fresh = await createClassWithRoles(ctx);
      expect(
        (await call('get', `/classes/${fresh.classId}/tasks/drafts/mine`, fresh.owner).expect(200)).body,
      ).toEqual({ draft: null });
      await createDraft(ctx, fresh.classId, fresh.owner, { title: 'older' });
      const newer = await createDraft(ctx, fresh.classId, fresh.owner, { title: 'newer' });
      await createDraft(ctx, fresh.classId, fresh.admin, { title: 'the admin draft' });
      await createTask(ctx, fresh.classId, fresh.owner, { title: 'published' });
      const res = await call('get', `/classes/${fresh.classId}/tasks/drafts/mine`, fresh.owner).expect(200);
      expect(res.body.draft).toEqual(await detail(newer.id, fresh.owner));
      expect(
        (await call('get', `/classes/${fresh.classId}/tasks/drafts/mine`, fresh.admin)).body.draft.title,
      ).toBe('the admin draft');
    });

    it('is for OWNER and ADMIN only', async () => {
      for (const path of [
        `/classes/${cls.classId}/tasks/drafts`,
        `/classes/${cls.classId}/tasks/drafts/mine`,
      ]) {
        const method = path.endsWith('mine') ? 'get' : 'post';
        expect((await call(method, path, cls.member, method === 'post' ? {} : undefined)).body).toEqual(
          error('FORBIDDEN'),
        );
        expect((await call(method, path, cls.outsider, method === 'post' ? {} : undefined)).body).toEqual(
          error('FORBIDDEN'),
        );
        expect((await call(method, path, null)).status).toBe(401);
      }
    });
  });

  describe('visibility', () => {
    let visible: TaskJson;
    let scheduled: TaskJson;
    let draft: TaskJson;
    let deleted: TaskJson;
    let visibilityClass: ClassWithRoles;

    beforeAll(async () => {
      const fresh = await createClassWithRoles(ctx);
      visibilityClass = fresh;
      visible = await createTask(ctx, fresh.classId, fresh.owner, {
        title: 'visible',
        startAt: '2020-01-01T00:00:00Z',
      });
      scheduled = await createTask(ctx, fresh.classId, fresh.owner, { title: 'scheduled', startAt: FUTURE });
      draft = await createDraft(ctx, fresh.classId, fresh.owner, { title: 'draft' });
      deleted = await createTask(ctx, fresh.classId, fresh.owner, { title: 'deleted' });
      await ctx.db.query(`INSERT INTO submissions (task_id, user_id) VALUES ($1, $2)`, [
        deleted.id,
        fresh.member.id,
      ]);
      await call('delete', `/tasks/${deleted.id}`, fresh.owner).expect(204);
    });

    it('lists started tasks to a MEMBER and scheduled ones too to OWNER and ADMIN; never drafts or deleted', async () => {
      const { classId, owner, admin, member } = visibilityClass;
      expect(await listIds(classId, member)).toEqual([visible.id]);
      for (const manager of [owner, admin])
        expect((await listIds(classId, manager)).sort()).toEqual([visible.id, scheduled.id].sort());
    });

    it('GET /tasks/:taskId: 404 for a MEMBER on drafts and scheduled tasks, 404 for everyone once deleted', async () => {
      const { owner, admin, member } = visibilityClass;
      for (const hidden of [scheduled, draft]) {
        const res = await call('get', `/tasks/${hidden.id}`, member);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(error('NOT_FOUND'));
        expect((await call('get', `/tasks/${hidden.id}`, admin)).status).toBe(200);
      }
      for (const user of [owner, admin, member])
        expect((await call('get', `/tasks/${deleted.id}`, user)).body).toEqual(error('NOT_FOUND'));
    });

    it('makes a scheduled task visible once its start has passed', async () => {
      const { member } = visibilityClass;
      await ctx.db.query(`UPDATE tasks SET start_at = now() - interval '1 minute' WHERE id = $1`, [
        scheduled.id,
      ]);
      expect((await call('get', `/tasks/${scheduled.id}`, member)).status).toBe(200);
      await ctx.db.query(`UPDATE tasks SET start_at = $2 WHERE id = $1`, [scheduled.id, FUTURE]);
    });

    it('answers 403 to non-members, 401 without token, 400 for a malformed id, 404 for an unknown one', async () => {
      const { outsider, owner } = visibilityClass;
      expect((await call('get', `/tasks/${visible.id}`, outsider)).body).toEqual(error('FORBIDDEN'));
      expect((await call('get', `/classes/${visibilityClass.classId}/tasks`, outsider)).body).toEqual(
        error('FORBIDDEN'),
      );
      expect((await call('get', `/tasks/${visible.id}`, null)).body).toEqual(error('UNAUTHORIZED'));
      expect((await call('get', `/classes/${visibilityClass.classId}/tasks`, null)).status).toBe(401);
      expect((await call('get', `/tasks/not-a-uuid`, owner)).body).toEqual(error('VALIDATION_ERROR'));
      expect((await call('get', `/tasks/${UNKNOWN_ID}`, owner)).body).toEqual(error('NOT_FOUND'));
      expect((await call('get', `/classes/${UNKNOWN_ID}/tasks`, owner)).body).toEqual(error('NOT_FOUND'));
    });

    it('GET /classes/:classId/tasks: [] to members who see no task, 403 to others, 400 for a malformed id', async () => {
      const fresh = await createClassWithRoles(ctx);
      expect(await listIds(fresh.classId, fresh.owner)).toEqual([]);
      await createTask(ctx, fresh.classId, fresh.owner, { startAt: FUTURE });
      await createDraft(ctx, fresh.classId, fresh.owner);
      expect(await listIds(fresh.classId, fresh.member)).toEqual([]);
      expect((await call('get', `/classes/${fresh.classId}/tasks`, fresh.outsider)).body).toEqual(
        error('FORBIDDEN'),
      );
      expect((await call('get', `/classes/not-a-uuid/tasks`, fresh.owner)).body).toEqual(
        error('VALIDATION_ERROR'),
      );
    });
  });

  describe('GET /classes/:classId/tasks and GET /tasks/:taskId for a member', () => {
    it('answers TaskSummary fields only, with counts, the caller state and nearest deadline first', async () => {
      const fresh = await createClassWithRoles(ctx);
      const late = await createTask(ctx, fresh.classId, fresh.owner, {
        title: 'late',
        dueAt: '2031-01-01T00:00:00Z',
      });
      const open = await createTask(ctx, fresh.classId, fresh.owner, { title: 'open', description: 'body' });
      const soon = await createTask(ctx, fresh.classId, fresh.owner, {
        title: 'soon',
        dueAt: '2030-01-01T00:00:00Z',
      });
      const submittedAt = await submit(soon.id, fresh.member);
      await submit(soon.id, fresh.admin);
      const res = await call('get', `/classes/${fresh.classId}/tasks`, fresh.member).expect(200);
      expect(res.body.map((t: TaskJson) => t.title)).toEqual(['soon', 'late', 'open']);
      expect(res.body[0]).toEqual({
        id: soon.id,
        classId: fresh.classId,
        className: fresh.className,
        title: 'soon',
        startAt: null,
        dueAt: '2030-01-01T00:00:00.000Z',
        myDueAt: '2030-01-01T00:00:00.000Z',
        hasExtension: false,
        hasRubric: false,
        maxPoints: null,
        allowLateSubmission: true,
        gradeRelease: 'IMMEDIATE',
        blockedBy: [],
        createdBy: fresh.owner.id,
        createdAt: soon.createdAt,
        updatedAt: soon.updatedAt,
        submittedCount: 2,
        memberCount: 3,
        userState: { viewedAt: null, tags: [], sortOrder: null, submittedAt },
        isPublished: true,
        publishedAt: soon.publishedAt,
        sourceText: null,
        isLocked: false,
      });
      expect(res.body[2]).toMatchObject({ id: open.id, submittedCount: 0, userState: null });
      expect(res.body[1].id).toBe(late.id);

      const memberDetail = await detail(soon.id, fresh.member);
      expect(memberDetail).toEqual({ ...res.body[0], description: null, attachments: [], stats: null });
      expect((await detail(soon.id, fresh.owner)).stats).toEqual({
        memberCount: 3,
        viewedCount: 0,
        submittedCount: 2,
      });
    });

    it('counts only current members, and GET /tasks/:taskId records no view', async () => {
      const fresh = await createClassWithRoles(ctx);
      const task = await createTask(ctx, fresh.classId, fresh.owner);
      await submit(task.id, fresh.member);
      await call('post', `/tasks/${task.id}/view`, fresh.member).expect(204);
      await detail(task.id, fresh.admin);
      expect((await detail(task.id, fresh.owner)).stats).toEqual({
        memberCount: 3,
        viewedCount: 1,
        submittedCount: 1,
      });
      await ctx.db.query(`DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`, [
        fresh.classId,
        fresh.member.id,
      ]);
      expect((await detail(task.id, fresh.owner)).stats).toEqual({
        memberCount: 2,
        viewedCount: 0,
        submittedCount: 0,
      });
    });
  });
});
