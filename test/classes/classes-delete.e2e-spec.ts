import { readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { FileStorage } from '../../src/files/file-storage';
import { apiError as error } from '../utils/expect';
import { ClassWithMembers, createClass, createClassWithMembers, TestClass } from '../utils/classes';
import { IDLE_JOBS } from '../utils/notifications';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

describe('DELETE /classes/:classId', () => {
  // No announcements of their own: the seeded published task would gain notifications while the refusals run.
  const ctx = useTestApp(IDLE_JOBS);
  let storage: FileStorage;
  beforeAll(async () => {
    storage = ctx.app.get(FileStorage);
  });

  /** Names of every file stored under the data directory. */
  function filesOnDisk(): string[] {
    return readdirSync(ctx.dataDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  }

  async function storeFile(text: string): Promise<string> {
    const stored = await storage.put(Readable.from([Buffer.from(text)]), 1024);
    return stored.key;
  }

  /**
   * A published task with two attachments, a draft, a submission of `submitter` with one attachment, a view
   * state, a cached Markdown draft and a notification; answers the stored file keys.
   */
  async function fillClass(cls: TestClass, creator: TestUser, submitter: TestUser): Promise<string[]> {
    const [task] = await ctx.db.query(
      `INSERT INTO tasks (class_id, title, created_by, is_published, published_at)
       VALUES ($1, 'Essay', $2, true, now()) RETURNING id`,
      [cls.id, creator.id],
    );
    await ctx.db.query(`INSERT INTO tasks (class_id, title, created_by) VALUES ($1, 'Draft', $2)`, [
      cls.id,
      creator.id,
    ]);
    const keys = [await storeFile('brief'), await storeFile('rubric'), await storeFile('my essay')];
    for (const key of keys.slice(0, 2)) {
      await ctx.db.query(
        `INSERT INTO task_attachments (task_id, file_key, original_name, mime_type, size_bytes)
         VALUES ($1, $2, 'file.txt', 'text/plain', 5)`,
        [task.id, key],
      );
    }
    const [submission] = await ctx.db.query(
      `INSERT INTO submissions (task_id, user_id, content) VALUES ($1, $2, 'done') RETURNING id`,
      [task.id, submitter.id],
    );
    await ctx.db.query(
      `INSERT INTO submission_attachments (submission_id, file_key, original_name) VALUES ($1, $2, 'essay.txt')`,
      [submission.id, keys[2]],
    );
    await ctx.db.query(`INSERT INTO task_user_states (task_id, user_id, viewed_at) VALUES ($1, $2, now())`, [
      task.id,
      submitter.id,
    ]);
    await ctx.db.query(
      `INSERT INTO task_markdown_cache (task_id, markdown, expires_at) VALUES ($1, '# x', now() + interval '1 day')`,
      [task.id],
    );
    await ctx.db.query(
      `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, title, content, status)
       VALUES ($1, 'TASK_PUBLISHED', $2, $3, 'Essay', 'Test class', 'New task', 'Essay', 'SENT')`,
      [submitter.id, task.id, cls.id],
    );
    return keys;
  }

  /** Rows that belong to a class, table by table. */
  async function rowsOf(classId: string): Promise<Record<string, number>> {
    const [row] = await ctx.db.query(
      `SELECT (SELECT count(*) FROM classes WHERE id = $1)::int AS classes,
              (SELECT count(*) FROM class_members WHERE class_id = $1)::int AS members,
              (SELECT count(*) FROM tasks WHERE class_id = $1)::int AS tasks,
              (SELECT count(*) FROM task_attachments a JOIN tasks t ON t.id = a.task_id
                WHERE t.class_id = $1)::int AS task_attachments,
              (SELECT count(*) FROM submissions s JOIN tasks t ON t.id = s.task_id WHERE t.class_id = $1)::int
                AS submissions,
              (SELECT count(*) FROM submission_attachments a JOIN submissions s ON s.id = a.submission_id
                 JOIN tasks t ON t.id = s.task_id WHERE t.class_id = $1)::int AS submission_attachments,
              (SELECT count(*) FROM notifications WHERE class_id = $1)::int AS notifications`,
      [classId],
    );
    return row;
  }

  const remove = (user: TestUser, classId: string) =>
    ctx.http.delete(`/classes/${classId}`).set('Authorization', user.auth);

  it('removes the class, its members, tasks, submissions, attachments, notifications and files', async () => {
    const f = await createClassWithMembers(ctx);
    const keys = await fillClass(f.cls, f.admin, f.member);
    // Another class of the same owner keeps everything.
    const other = await createClass(ctx, f.owner, { name: 'Other' });
    const otherKeys = await fillClass(other, f.owner, f.owner);
    expect(filesOnDisk()).toEqual(expect.arrayContaining([...keys, ...otherKeys]));
    expect(await rowsOf(f.cls.id)).toEqual({
      classes: 1,
      members: 3,
      tasks: 2,
      task_attachments: 2,
      submissions: 1,
      submission_attachments: 1,
      notifications: 1,
    });
    const otherRows = await rowsOf(other.id);

    const res = await remove(f.owner, f.cls.id);
    expect(res.status).toBe(204);
    expect(res.body).toEqual({});

    expect(await rowsOf(f.cls.id)).toEqual({
      classes: 0,
      members: 0,
      tasks: 0,
      task_attachments: 0,
      submissions: 0,
      submission_attachments: 0,
      notifications: 0,
    });
    const onDisk = filesOnDisk();
    for (const key of keys) expect(onDisk).not.toContain(key);
    expect(onDisk).toEqual(expect.arrayContaining(otherKeys));
    expect(await rowsOf(other.id)).toEqual(otherRows);

    const gone = await ctx.http.get(`/classes/${f.cls.id}`).set('Authorization', f.owner.auth);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual(error('NOT_FOUND'));
    const list = await ctx.http.get('/classes').set('Authorization', f.member.auth).expect(200);
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([f.member.personalClassId]);
    const join = await ctx.http
      .post('/classes/join')
      .set('Authorization', f.outsider.auth)
      .send({ inviteCode: f.cls.inviteCode });
    expect(join.status).toBe(404);
  });

  it('deletes an empty class', async () => {
    const user = await createUser(ctx);
    const created = await ctx.http
      .post('/classes')
      .set('Authorization', user.auth)
      .send({ name: 'Empty' })
      .expect(201);
    await remove(user, created.body.id).expect(204);
    expect((await rowsOf(created.body.id)).classes).toBe(0);
  });

  describe('refusals keep everything', () => {
    let f: ClassWithMembers;
    let keys: string[];
    let before: Record<string, number>;
    beforeAll(async () => {
      f = await createClassWithMembers(ctx);
      keys = await fillClass(f.cls, f.owner, f.member);
      before = await rowsOf(f.cls.id);
    });
    afterEach(async () => {
      expect(await rowsOf(f.cls.id)).toEqual(before);
      expect(filesOnDisk()).toEqual(expect.arrayContaining(keys));
    });

    it.each<'admin' | 'member' | 'outsider'>(['admin', 'member', 'outsider'])(
      'forbids the %s (403)',
      async (actor) => {
        const res = await remove(f[actor], f.cls.id);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(error('FORBIDDEN'));
      },
    );

    it('answers 401 without a token', async () => {
      const res = await ctx.http.delete(`/classes/${f.cls.id}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(error('UNAUTHORIZED'));
    });

    it('forbids the former owner after a transfer, and lets the new owner delete', async () => {
      const g = await createClassWithMembers(ctx);
      await ctx.http
        .post(`/classes/${g.cls.id}/transfer`)
        .set('Authorization', g.owner.auth)
        .send({ newOwnerId: g.member.id })
        .expect(200);
      expect((await remove(g.owner, g.cls.id)).status).toBe(403);
      await remove(g.member, g.cls.id).expect(204);
    });
  });

  it('refuses to delete the personal class (403)', async () => {
    const user = await createUser(ctx);
    const res = await remove(user, user.personalClassId);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(error('FORBIDDEN'));
    expect((await rowsOf(user.personalClassId)).classes).toBe(1);
  });
});
