import request from 'supertest';
import { createTestApp, TestApp } from './utils/test-app';
import { ClassWithRoles, createClassWithRoles, createDraft, createTask, TaskJson } from './utils/tasks';
import { TestUser } from './utils/users';

const error = (code: string) => ({ error: expect.any(String), code });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const FUTURE = '2099-01-01T00:00:00.000Z';

describe('tasks', () => {
  let ctx: TestApp;
  let cls: ClassWithRoles;
  let other: ClassWithRoles;

  type Method = 'get' | 'post' | 'patch' | 'delete';
  const call = (method: Method, path: string, user: TestUser | null, body?: object): request.Test => {
    const req = ctx.http[method](path);
    if (user) req.set('Authorization', user.auth);
    return body === undefined ? req : req.send(body);
  };
  const detail = async (taskId: string, user: TestUser): Promise<TaskJson> =>
    (await call('get', `/tasks/${taskId}`, user).expect(200)).body;
  const listIds = async (classId: string, user: TestUser): Promise<string[]> =>
    (await call('get', `/classes/${classId}/tasks`, user).expect(200)).body.map((t: TaskJson) => t.id);
  const submit = async (taskId: string, user: TestUser): Promise<string> => {
    const [row] = await ctx.db.query(
      `INSERT INTO submissions (task_id, user_id, content) VALUES ($1, $2, 'done') RETURNING first_submitted_at`,
      [taskId, user.id],
    );
    return (row.first_submitted_at as Date).toISOString();
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    [cls, other] = await Promise.all([createClassWithRoles(ctx), createClassWithRoles(ctx)]);
  });
  afterAll(async () => ctx.close());

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
        allowLateSubmission: false,
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
        allowLateSubmission: true,
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

  describe('PATCH /tasks/:taskId', () => {
    it('changes the given fields; null clears description, startAt and dueAt', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, {
        description: 'old',
        startAt: '2020-01-01T00:00:00Z',
        dueAt: '2030-01-01T00:00:00Z',
      });
      const res = await call('patch', `/tasks/${task.id}`, cls.admin, {
        title: 'Renamed',
        allowLateSubmission: false,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        title: 'Renamed',
        allowLateSubmission: false,
        description: 'old',
        dueAt: '2030-01-01T00:00:00.000Z',
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(task.updatedAt));
      const cleared = await call('patch', `/tasks/${task.id}`, cls.owner, {
        description: null,
        startAt: null,
        dueAt: null,
      });
      expect(cleared.body).toMatchObject({
        description: null,
        startAt: null,
        dueAt: null,
        title: 'Renamed',
        publishedAt: task.publishedAt,
      });
    });

    it('checks dueAt against the stored startAt and refuses an empty title on a published task', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { startAt: '2030-01-10T00:00:00Z' });
      for (const body of [
        { dueAt: '2030-01-09T00:00:00Z' },
        { title: '' },
        { title: '  ' },
        { title: null },
        { allowLateSubmission: null },
        { foo: 1 },
      ]) {
        const res = await call('patch', `/tasks/${task.id}`, cls.owner, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
      await call('patch', `/tasks/${task.id}`, cls.owner, {
        startAt: null,
        dueAt: '2030-01-09T00:00:00Z',
      }).expect(200);
    });

    it('works on drafts, where the title may be empty', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner);
      const res = await call('patch', `/tasks/${draft.id}`, cls.owner, { title: '', description: 'WIP' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ title: '', description: 'WIP', isPublished: false });
    });

    it('is for OWNER and ADMIN only', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      expect((await call('patch', `/tasks/${task.id}`, cls.member, { title: 'x' })).body).toEqual(
        error('FORBIDDEN'),
      );
      expect((await call('patch', `/tasks/${task.id}`, cls.outsider, { title: 'x' })).body).toEqual(
        error('FORBIDDEN'),
      );
      expect((await call('patch', `/tasks/${task.id}`, null, { title: 'x' })).status).toBe(401);
      expect((await call('patch', `/tasks/${UNKNOWN_ID}`, cls.owner, { title: 'x' })).body).toEqual(
        error('NOT_FOUND'),
      );
      const draft = await createDraft(ctx, cls.classId, cls.owner);
      expect((await call('patch', `/tasks/${draft.id}`, cls.member, { title: 'x' })).body).toEqual(
        error('NOT_FOUND'),
      );
      expect((await detail(task.id, cls.owner)).title).toBe(task.title);
    });
  });

  describe('blockedBy', () => {
    const setBlockers = (taskId: string, blockedBy: string[]) =>
      call('patch', `/tasks/${taskId}`, cls.owner, { blockedBy });

    it('refuses the task itself, unknown tasks, tasks of another class and cycles of any length', async () => {
      const [a, b, c, d] = await Promise.all(
        ['A', 'B', 'C', 'D'].map((title) => createTask(ctx, cls.classId, cls.owner, { title })),
      );
      const foreign = await createTask(ctx, other.classId, other.owner);
      for (const blockers of [[a.id], [UNKNOWN_ID], [foreign.id]]) {
        const res = await setBlockers(a.id, blockers);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
      await setBlockers(b.id, [a.id]).expect(200);
      expect((await setBlockers(a.id, [b.id])).body).toEqual(error('VALIDATION_ERROR'));
      await setBlockers(c.id, [b.id]).expect(200);
      await setBlockers(d.id, [c.id, a.id]).expect(200);
      expect((await setBlockers(a.id, [d.id])).body).toEqual(error('VALIDATION_ERROR'));
      expect((await setBlockers(b.id, [c.id])).body).toEqual(error('VALIDATION_ERROR'));
      expect((await detail(a.id, cls.owner)).blockedBy).toEqual([]);
      // A diamond is no cycle, and blockers may be replaced or cleared.
      await setBlockers(c.id, [a.id, b.id]).expect(200);
      expect((await setBlockers(c.id, [])).body.blockedBy).toEqual([]);
      expect((await setBlockers(a.id, [c.id])).body.blockedBy).toEqual([c.id]);
    });

    it('locks a task for a MEMBER until every existing blocker has their submission; never for OWNER/ADMIN', async () => {
      const fresh = await createClassWithRoles(ctx);
      const first = await createTask(ctx, fresh.classId, fresh.owner, { title: 'first' });
      const second = await createTask(ctx, fresh.classId, fresh.owner, { title: 'second' });
      const capstone = await createTask(ctx, fresh.classId, fresh.owner, {
        title: 'capstone',
        blockedBy: [first.id, second.id],
      });
      const lockOf = async (user: TestUser) => {
        const list = (await call('get', `/classes/${fresh.classId}/tasks`, user).expect(200))
          .body as TaskJson[];
        const listed = list.find((t) => t.id === capstone.id)!.isLocked;
        expect((await detail(capstone.id, user)).isLocked).toBe(listed);
        return listed;
      };
      expect(await lockOf(fresh.member)).toBe(true);
      expect(await lockOf(fresh.owner)).toBe(false);
      expect(await lockOf(fresh.admin)).toBe(false);
      await submit(first.id, fresh.member);
      expect(await lockOf(fresh.member)).toBe(true);
      await submit(second.id, fresh.member);
      expect(await lockOf(fresh.member)).toBe(false);

      // A deleted blocker blocks nothing: soft-deleted (it has a submission) ...
      const third = await createTask(ctx, fresh.classId, fresh.owner, { title: 'third' });
      await call('patch', `/tasks/${capstone.id}`, fresh.owner, { blockedBy: [third.id] }).expect(200);
      expect(await lockOf(fresh.member)).toBe(true);
      await submit(third.id, fresh.admin);
      await call('delete', `/tasks/${third.id}`, fresh.owner).expect(204);
      expect(await lockOf(fresh.member)).toBe(false);
      expect((await detail(capstone.id, fresh.owner)).blockedBy).toEqual([]);
      // ... or removed.
      const fourth = await createTask(ctx, fresh.classId, fresh.owner, { title: 'fourth' });
      await call('patch', `/tasks/${capstone.id}`, fresh.owner, { blockedBy: [fourth.id] }).expect(200);
      expect(await lockOf(fresh.member)).toBe(true);
      await call('delete', `/tasks/${fourth.id}`, fresh.owner).expect(204);
      expect(await lockOf(fresh.member)).toBe(false);
    });
  });

  describe('POST /tasks/:taskId/publish', () => {
    it('publishes a draft with optional fields; publishing again changes nothing', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { title: 'Draft' });
      const res = await call('post', `/tasks/${draft.id}/publish`, cls.admin, {
        title: 'Final',
        dueAt: '2030-02-01T00:00:00Z',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: draft.id,
        title: 'Final',
        dueAt: '2030-02-01T00:00:00.000Z',
        isPublished: true,
      });
      expect(res.body.publishedAt).toMatch(ISO);
      const [row] = await ctx.db.query(`SELECT is_published, published_at FROM tasks WHERE id = $1`, [
        draft.id,
      ]);
      expect(row.published_at.toISOString()).toBe(res.body.publishedAt);
      expect(await listIds(cls.classId, cls.member)).toContain(draft.id);

      const again = await call('post', `/tasks/${draft.id}/publish`, cls.owner, {});
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
    });

    it('refuses an empty title (400) and invalid fields; MEMBERs cannot see drafts (404) nor publish (403)', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { title: '' });
      expect((await call('post', `/tasks/${draft.id}/publish`, cls.owner, {})).body).toEqual(
        error('VALIDATION_ERROR'),
      );
      expect((await call('post', `/tasks/${draft.id}/publish`, cls.owner, { title: ' ' })).status).toBe(400);
      expect(
        (await call('post', `/tasks/${draft.id}/publish`, cls.owner, { title: 'T', dueAt: 'soon' })).status,
      ).toBe(400);
      expect((await detail(draft.id, cls.owner)).isPublished).toBe(false);
      expect((await call('post', `/tasks/${draft.id}/publish`, cls.member, {})).body).toEqual(
        error('NOT_FOUND'),
      );
      expect((await call('post', `/tasks/${draft.id}/publish`, cls.outsider, {})).body).toEqual(
        error('FORBIDDEN'),
      );
      expect((await call('post', `/tasks/${draft.id}/publish`, null, {})).status).toBe(401);
      const published = await createTask(ctx, cls.classId, cls.owner);
      expect((await call('post', `/tasks/${published.id}/publish`, cls.member, {})).body).toEqual(
        error('FORBIDDEN'),
      );
    });

    it('keeps a future startAt: the task stays hidden from MEMBERs until then', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { title: 'Later', startAt: FUTURE });
      await call('post', `/tasks/${draft.id}/publish`, cls.owner, {}).expect(200);
      expect(await listIds(cls.classId, cls.member)).not.toContain(draft.id);
      expect(await listIds(cls.classId, cls.owner)).toContain(draft.id);
    });
  });

  describe('DELETE /tasks/:taskId', () => {
    it('removes a task without submissions with everything of it', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      await call('post', `/tasks/${task.id}/view`, cls.member).expect(204);
      await call('delete', `/tasks/${task.id}`, cls.admin).expect(204);
      const [counts] = await ctx.db.query(
        `SELECT (SELECT count(*)::int FROM tasks WHERE id = $1) AS tasks,
                (SELECT count(*)::int FROM task_user_states WHERE task_id = $1) AS states`,
        [task.id],
      );
      expect(counts).toEqual({ tasks: 0, states: 0 });
      expect((await call('get', `/tasks/${task.id}`, cls.owner)).body).toEqual(error('NOT_FOUND'));
      expect((await call('delete', `/tasks/${task.id}`, cls.owner)).body).toEqual(error('NOT_FOUND'));
    });

    it('keeps a task with submissions as a soft-deleted record without body', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner, { description: 'secret body' });
      await submit(task.id, cls.member);
      await call('delete', `/tasks/${task.id}`, cls.owner).expect(204);
      const [row] = await ctx.db.query(`SELECT deleted_at, description, title FROM tasks WHERE id = $1`, [
        task.id,
      ]);
      expect(row.deleted_at).toBeInstanceOf(Date);
      expect(row.description).toBeNull();
      expect(row.title).toBe(task.title);
      expect(
        (await ctx.db.query(`SELECT count(*)::int AS n FROM submissions WHERE task_id = $1`, [task.id]))[0].n,
      ).toBe(1);
      for (const user of [cls.owner, cls.member]) {
        expect((await call('get', `/tasks/${task.id}`, user)).body).toEqual(error('NOT_FOUND'));
        expect(await listIds(cls.classId, user)).not.toContain(task.id);
      }
      expect((await call('delete', `/tasks/${task.id}`, cls.owner)).status).toBe(404);
      expect((await call('patch', `/tasks/${task.id}`, cls.owner, { title: 'x' })).status).toBe(404);
    });

    it('is for OWNER and ADMIN only', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      expect((await call('delete', `/tasks/${task.id}`, cls.member)).body).toEqual(error('FORBIDDEN'));
      expect((await call('delete', `/tasks/${task.id}`, cls.outsider)).body).toEqual(error('FORBIDDEN'));
      expect((await call('delete', `/tasks/${task.id}`, null)).status).toBe(401);
      expect((await call('delete', `/tasks/not-a-uuid`, cls.owner)).status).toBe(400);
      await detail(task.id, cls.member);
    });
  });

  describe('POST /tasks/:taskId/view and PATCH /tasks/:taskId/state', () => {
    it('sets viewedAt on the first view only', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      const first = await call('post', `/tasks/${task.id}/view`, cls.member);
      expect(first.status).toBe(204);
      expect(first.text).toBe('');
      const viewedAt = (await detail(task.id, cls.member)).userState!.viewedAt;
      expect(viewedAt).toMatch(ISO);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await call('post', `/tasks/${task.id}/view`, cls.member).expect(204);
      expect((await detail(task.id, cls.member)).userState).toEqual({
        viewedAt,
        tags: [],
        sortOrder: null,
        submittedAt: null,
      });
      expect((await detail(task.id, cls.owner)).userState).toBeNull();
    });

    it('sets tags and sortOrder separately and answers the TaskUserState', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      const tagged = await call('patch', `/tasks/${task.id}/state`, cls.member, { tags: [' math ', '作业'] });
      expect(tagged.status).toBe(200);
      expect(tagged.body).toEqual({
        viewedAt: null,
        tags: ['math', '作业'],
        sortOrder: null,
        submittedAt: null,
      });
      const sorted = await call('patch', `/tasks/${task.id}/state`, cls.member, { sortOrder: 2.5 });
      expect(sorted.body).toEqual({
        viewedAt: null,
        tags: ['math', '作业'],
        sortOrder: 2.5,
        submittedAt: null,
      });
      const submittedAt = await submit(task.id, cls.member);
      const cleared = await call('patch', `/tasks/${task.id}/state`, cls.member, {
        tags: [],
        sortOrder: null,
      });
      expect(cleared.body).toEqual({ viewedAt: null, tags: [], sortOrder: null, submittedAt });
      // Everything cleared but the submission: the summary still shows the state.
      expect((await detail(task.id, cls.member)).userState).toEqual(cleared.body);
      const untouched = await createTask(ctx, cls.classId, cls.owner);
      await call('patch', `/tasks/${untouched.id}/state`, cls.owner, { tags: ['x'] }).expect(200);
      await call('patch', `/tasks/${untouched.id}/state`, cls.owner, { tags: [] }).expect(200);
      expect((await detail(untouched.id, cls.owner)).userState).toBeNull();
    });

    it.each<[string, object]>([
      ['21 tags', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }],
      ['a tag of 33 characters', { tags: ['x'.repeat(33)] }],
      ['an empty tag', { tags: [' '] }],
      ['a tag that is not a string', { tags: [1] }],
      ['duplicate tags', { tags: ['a', 'a'] }],
      ['tags null', { tags: null }],
      ['sortOrder as a string', { sortOrder: '1' }],
      ['an unknown field', { pinned: true }],
    ])('refuses %s (400)', async (_case, body) => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      const res = await call('patch', `/tasks/${task.id}/state`, cls.member, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
    });

    it('accepts 20 tags of 32 characters', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      const tags = Array.from({ length: 20 }, (_, i) => `${i}`.padStart(32, 'x'));
      expect(
        (await call('patch', `/tasks/${task.id}/state`, cls.admin, { tags }).expect(200)).body.tags,
      ).toEqual(tags);
    });

    it('is for whoever can see the task', async () => {
      const scheduled = await createTask(ctx, cls.classId, cls.owner, { startAt: FUTURE });
      for (const [method, path, body] of [
        ['post', `/tasks/${scheduled.id}/view`, undefined],
        ['patch', `/tasks/${scheduled.id}/state`, { sortOrder: 1 }],
      ] as const) {
        expect((await call(method, path, cls.member, body)).body).toEqual(error('NOT_FOUND'));
        expect((await call(method, path, cls.outsider, body)).body).toEqual(error('FORBIDDEN'));
        expect((await call(method, path, null, body)).status).toBe(401);
        expect((await call(method, path, cls.admin, body)).status).toBeLessThan(300);
      }
    });
  });

  describe('GET /tasks/mine', () => {
    it("lists visible tasks of all the caller's classes with classColor, nearest deadline first, no deadline last", async () => {
      const a = await createClassWithRoles(ctx);
      const b = await createClassWithRoles(ctx);
      await ctx.db.query(`UPDATE classes SET color = '#112233' WHERE id = $1`, [b.classId]);
      // b.member joins class a as well.
      await ctx.db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'MEMBER')`, [
        a.classId,
        b.member.id,
      ]);
      const none = await createTask(ctx, a.classId, a.owner, { title: 'no deadline' });
      const far = await createTask(ctx, b.classId, b.owner, { title: 'far', dueAt: '2032-01-01T00:00:00Z' });
      const near = await createTask(ctx, a.classId, a.owner, {
        title: 'near',
        dueAt: '2031-01-01T00:00:00Z',
      });
      await createTask(ctx, a.classId, a.owner, {
        title: 'scheduled',
        startAt: '2031-05-01T00:00:00Z',
        dueAt: '2031-06-01T00:00:00Z',
      });
      await createDraft(ctx, b.classId, b.owner, { title: 'draft' });
      const personal = await createTask(ctx, b.member.personalClassId, b.member, {
        title: 'personal',
        dueAt: '2033-01-01T00:00:00Z',
      });

      const res = await call('get', '/tasks/mine', b.member).expect(200);
      expect(res.body.map((t: TaskJson) => t.title)).toEqual(['near', 'far', 'personal', 'no deadline']);
      const farEntry = res.body[1];
      expect(farEntry).toEqual({
        ...(await call('get', `/classes/${b.classId}/tasks`, b.member)).body.find(
          (t: TaskJson) => t.id === far.id,
        ),
        classColor: '#112233',
      });
      expect(res.body[0]).toMatchObject({ id: near.id, classId: a.classId, classColor: '#6366f1' });
      expect(res.body[2]).toMatchObject({
        id: personal.id,
        classId: b.member.personalClassId,
        classColor: '#6366f1',
      });
      expect(res.body[3].id).toBe(none.id);
      // The OWNER also sees scheduled tasks of their class.
      expect((await call('get', '/tasks/mine', a.owner)).body.map((t: TaskJson) => t.title)).toEqual([
        'near',
        'scheduled',
        'no deadline',
      ]);
      expect((await call('get', '/tasks/mine', null)).status).toBe(401);
    });
  });
});
