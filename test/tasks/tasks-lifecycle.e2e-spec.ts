import { NotificationProducer } from '../../src/notifications/production/notification-producer';
import { apiError as error } from '../utils/expect';
import { raceAgainstTransaction, waitForLockWaiters } from '../utils/database';
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
import { TestUser } from '../utils/users';

describe('tasks: changes, blockers, publication, deletion, personal state', () => {
  const ctx = useTestApp();
  let cls: ClassWithRoles;
  let other: ClassWithRoles;
  const { call, detail, listIds, submit } = taskApi(() => ctx);

  const lockWaiters = (count: number) => waitForLockWaiters(ctx.db, count);

  beforeAll(async () => {
    [cls, other] = await Promise.all([createClassWithRoles(ctx), createClassWithRoles(ctx)]);
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

    it('never closes a cycle when A→B and B→A are set at once', async () => {
      for (let round = 0; round < 5; round++) {
        const [a, b] = await Promise.all([
          createTask(ctx, cls.classId, cls.owner),
          createTask(ctx, cls.classId, cls.owner),
        ]);
        const answers = await Promise.all([setBlockers(a.id, [b.id]), setBlockers(b.id, [a.id])]);
        expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
        const [{ linked }] = await ctx.db.query(
          `SELECT count(*)::int AS linked FROM tasks WHERE id = ANY($1) AND blocked_by <> '{}'`,
          [[a.id, b.id]],
        );
        expect(linked).toBe(1);
      }
    });

    it('changing blockedBy while a blocker is deleted answers both (no deadlock)', async () => {
      // Both requests are held at the class's blockedBy lock, the delete first, then let go together: each
      // must have queued for that lock before taking a task row lock.
      const [blocker, replacement] = await Promise.all([
        createTask(ctx, cls.classId, cls.owner),
        createTask(ctx, cls.classId, cls.owner),
      ]);
      const dependent = await createTask(ctx, cls.classId, cls.owner, { blockedBy: [blocker.id] });
      const holder = ctx.db.createQueryRunner();
      await holder.startTransaction();
      try {
        await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended('tasks.blocked_by:' || $1, 0))`, [
          cls.classId,
        ]);
        const removal = call('delete', `/tasks/${blocker.id}`, cls.admin).then((res) => res);
        await lockWaiters(1);
        const change = setBlockers(dependent.id, [replacement.id]).then((res) => res);
        await lockWaiters(2);
        await holder.commitTransaction();
        const [removed, changed] = await Promise.all([removal, change]);
        expect(removed.status).toBe(204);
        expect(changed.status).toBe(200);
        expect(changed.body.blockedBy).toEqual([replacement.id]);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
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

    it('publishes once when published by several requests at once: one publishedAt, one notification each', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { title: 'Together' });
      const answers = await Promise.all(
        [cls.owner, cls.admin, cls.owner, cls.admin].map((user) =>
          call('post', `/tasks/${draft.id}/publish`, user, {}),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
      expect(new Set(answers.map((res) => res.body.publishedAt)).size).toBe(1);
      const producer = ctx.app.get(NotificationProducer);
      await Promise.all([
        producer.publishDue('all'),
        producer.publishDue('all'),
        producer.publishDue('recent'),
      ]);
      const notified: { user_id: string; n: number }[] = await ctx.db.query(
        `SELECT user_id, count(*)::int AS n FROM notifications WHERE task_id = $1 AND type = 'TASK_PUBLISHED'
          GROUP BY user_id`,
        [draft.id],
      );
      const byUser = Object.fromEntries(notified.map((row) => [row.user_id, row.n]));
      expect(byUser).toEqual({ [cls.owner.id]: 1, [cls.admin.id]: 1, [cls.member.id]: 1 });
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

    it('deleting a blocker while its class is deleted answers both (no deadlock)', async () => {
      // The task deletion is held after it locked the blocker (at the attachment lookup) while the class
      // deletion locks the class's tasks, the dependent first; the task deletion then unblocks that dependent.
      // Neither may hold a task the other waits for.
      const doomed = await createClassWithRoles(ctx);
      const dependent = await createTask(ctx, doomed.classId, doomed.owner);
      const blocker = await createTask(ctx, doomed.classId, doomed.owner);
      await call('patch', `/tasks/${dependent.id}`, doomed.owner, { blockedBy: [blocker.id] }).expect(200);
      // Row versions in creation order again, so the class deletion finds the dependent first.
      await call('patch', `/tasks/${blocker.id}`, doomed.owner, { description: 'first' }).expect(200);
      const holder = ctx.db.createQueryRunner();
      await holder.startTransaction();
      try {
        await holder.query(`LOCK TABLE task_attachments IN ACCESS EXCLUSIVE MODE`);
        const taskDeletion = call('delete', `/tasks/${blocker.id}`, doomed.admin).then((res) => res);
        await waitForLockWaiters(ctx.db, 1);
        const classDeletion = call('delete', `/classes/${doomed.classId}`, doomed.owner).then((res) => res);
        await waitForLockWaiters(ctx.db, 2);
        await holder.commitTransaction();
        const [task, cls] = await Promise.all([taskDeletion, classDeletion]);
        expect([task.status, cls.status]).toEqual([204, 204]);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
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

    // ArrayUnique compares every element with every other: a 1 MiB body of 150,000 distinct tags kept the
    // event loop of the instance busy for about 30 seconds before the size bound answered.
    it('refuses an oversized tags or blockedBy array at once, before any check of its elements', async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      const tags = Array.from({ length: 150_000 }, (_, i) => i.toString(36));
      const blockedBy = Array.from(
        { length: 26_000 },
        (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      );
      for (const [path, user, body] of [
        [`/tasks/${task.id}/state`, cls.member, { tags }],
        [`/tasks/${task.id}`, cls.owner, { blockedBy }],
      ] as const) {
        const started = Date.now();
        const res = await call('patch', path, user, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
        expect(res.body.error).toMatch(/at most 50|must contain no more than/);
        // A few hundred ms of parsing and copying on an idle machine; a wide bound for a loaded one.
        expect(Date.now() - started).toBeLessThan(8_000);
      }
    }, 120_000);

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

    it.each([
      ['POST /tasks/:taskId/view', 'post', '/view', undefined, 'hard'],
      ['PATCH /tasks/:taskId/state', 'patch', '/state', { tags: ['later'] }, 'hard'],
      ['POST /tasks/:taskId/view', 'post', '/view', undefined, 'soft'],
      ['PATCH /tasks/:taskId/state', 'patch', '/state', { tags: ['later'] }, 'soft'],
    ] as const)(
      '%s racing a %s delete of the task: 404, not 500',
      async (_route, method, path, body, kind) => {
        // The request passes the access check, then waits for the task row a deletion holds; the task is gone
        // when it goes on.
        const task = await createTask(ctx, cls.classId, cls.owner);
        const deletion =
          kind === 'hard'
            ? `DELETE FROM tasks WHERE id = $1`
            : `UPDATE tasks SET deleted_at = now() WHERE id = $1`;
        const res = await raceAgainstTransaction(
          ctx.db,
          [
            [`SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE`, [task.id]],
            [deletion, [task.id]],
          ],
          () => call(method, `/tasks/${task.id}${path}`, cls.member, body),
        );
        expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: error('NOT_FOUND') });
      },
    );
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
