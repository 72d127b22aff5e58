import { attachQueryCounter, QueryCounter } from '../utils/query-counter';
import { createTestApp, TestApp } from '../utils/test-app';
import { ClassWithRoles, createClassWithRoles, TaskJson } from '../utils/tasks';
import { TestUser } from '../utils/users';

/** Adds `count` published tasks (every third blocked by the one before), members, submissions and states. */
async function seed(ctx: TestApp, cls: ClassWithRoles, count: number, extraMembers: number): Promise<void> {
  await ctx.db.query(
    `INSERT INTO tasks (class_id, title, is_published, published_at, due_at, created_by)
     SELECT $1, 'Seeded ' || g, true, now(), now() + g * interval '1 hour', $2 FROM generate_series(1, $3) g`,
    [cls.classId, cls.owner.id, count],
  );
  await ctx.db.query(
    `UPDATE tasks t SET blocked_by = ARRAY[prev.id]
       FROM (SELECT id, lag(id) OVER (ORDER BY due_at) AS prev_id, row_number() OVER (ORDER BY due_at) AS n
               FROM tasks WHERE class_id = $1) ordered
       JOIN tasks prev ON prev.id = ordered.prev_id
      WHERE t.id = ordered.id AND ordered.n % 3 = 0`,
    [cls.classId],
  );
  await ctx.db.query(
    `WITH added AS (
       INSERT INTO users (email, password_hash)
       SELECT 'bulk-' || gen_random_uuid() || '@example.com', 'x' FROM generate_series(1, $2) RETURNING id
     )
     INSERT INTO class_members (class_id, user_id, role) SELECT $1, id, 'MEMBER' FROM added`,
    [cls.classId, extraMembers],
  );
  await ctx.db.query(
    `INSERT INTO submissions (task_id, user_id)
     SELECT t.id, m.user_id FROM tasks t JOIN class_members m ON m.class_id = t.class_id
      WHERE t.class_id = $1 AND (hashtext(t.id::text || m.user_id::text) % 2 = 0)
     ON CONFLICT DO NOTHING`,
    [cls.classId],
  );
  // Every other task has a rubric: its maximum is a column of the task, read by the same statement.
  await ctx.db.query(
    `UPDATE tasks SET rubric_max_points = 12.5 WHERE class_id = $1 AND hashtext(id::text) % 2 = 0`,
    [cls.classId],
  );
  await ctx.db.query(
    `INSERT INTO task_user_states (task_id, user_id, viewed_at, tags)
     SELECT t.id, m.user_id, now(), ARRAY['seen'] FROM tasks t JOIN class_members m ON m.class_id = t.class_id
      WHERE t.class_id = $1
     ON CONFLICT DO NOTHING`,
    [cls.classId],
  );
}

describe('task lists cost a fixed number of SQL statements', () => {
  let ctx: TestApp;
  let counter: QueryCounter;
  let cls: ClassWithRoles;

  beforeAll(async () => {
    // Without the token-user cache every measured request authenticates alike (one statement). The seed's
    // bulk inserts (thousands of submissions through their count triggers) may take longer than an
    // interactive statement on a busy machine.
    ctx = await createTestApp({ AUTH_CACHE_TTL_MS: '0', DATABASE_QUERY_TIMEOUT_MS: '30000' });
    counter = attachQueryCounter(ctx);
    cls = await createClassWithRoles(ctx);
  });
  afterAll(async () => {
    counter.detach();
    await ctx.close();
  });

  const measure = async (
    path: string,
    user: TestUser,
  ): Promise<{ statements: string[]; body: TaskJson[] }> => {
    let body: TaskJson[] = [];
    const statements = await counter.record(async () => {
      const res = await ctx.http.get(path).set('Authorization', user.auth).expect(200);
      body = res.body;
    });
    return { statements, body };
  };

  it('answers 3 and 300 tasks with the same statements, for MEMBER and OWNER, per class and across classes', async () => {
    await seed(ctx, cls, 3, 2);
    const paths = [`/classes/${cls.classId}/tasks`, '/tasks/mine'];
    const small = [];
    for (const path of paths)
      for (const user of [cls.member, cls.owner]) small.push(await measure(path, user));
    for (const { body } of small) expect(body).toHaveLength(3);

    await seed(ctx, cls, 297, 60);
    for (const [i, path] of [...paths.flatMap((p) => [p, p])].entries()) {
      const user = i % 2 === 0 ? cls.member : cls.owner;
      const large = await measure(path, user);
      expect(large.body).toHaveLength(300);
      expect(large.statements).toEqual(small[i].statements);
      // Authentication and the list itself (which also decides membership).
      expect(large.statements.length).toBeLessThanOrEqual(2);
    }

    // The aggregates saw the data: counts, states and locks are filled in.
    const { body } = await measure(`/classes/${cls.classId}/tasks`, cls.member);
    expect(new Set(body.map((t) => t.memberCount))).toEqual(new Set([65]));
    expect(body.some((t) => t.submittedCount > 0)).toBe(true);
    expect(body.every((t) => t.userState?.tags[0] === 'seen')).toBe(true);
    expect(body.filter((t) => t.blockedBy.length > 0).length).toBeGreaterThanOrEqual(99);
    expect(body.some((t) => t.isLocked) && body.some((t) => !t.isLocked)).toBe(true);
    expect(body.filter((t) => t.hasRubric).every((t) => t.maxPoints === 12.5)).toBe(true);
    expect(body.some((t) => t.hasRubric) && body.some((t) => !t.hasRubric && t.maxPoints === null)).toBe(
      true,
    );
  });
});
