import { apiError } from '../utils/expect';
import { IDLE_JOBS } from '../utils/notifications';
import { putSubmission } from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, createTask, TaskJson } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { addMember } from '../utils/classes';

const ETAG = /^"[A-Za-z0-9_-]{43}"$/;

describe('ETag, If-None-Match and If-Match: conditional reads and writes', () => {
  // Idle jobs: no reminder or delivery changes an inbox between two reads of a test.
  const ctx = useTestApp(IDLE_JOBS);
  let cls: ClassWithRoles;
  let task: TaskJson;

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx);
    task = await createTask(ctx, cls.classId, cls.owner, { title: 'Tagged' });
    await putSubmission(ctx, task.id, cls.member, 'first answer');
    await ctx.db.query(
      `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, title, content, status)
       VALUES ($1, 'TASK_PUBLISHED', $2, $3, 'Tagged', 'Class', 'New task', 'Tagged', 'SENT')`,
      [cls.member.id, task.id, cls.classId],
    );
  });

  const get = (path: string, user: TestUser, ifNoneMatch?: string) => {
    const req = ctx.http.get(path).set('Authorization', user.auth);
    return ifNoneMatch === undefined ? req : req.set('If-None-Match', ifNoneMatch);
  };

  const READS: [string, () => string, () => TestUser][] = [
    ['GET /tasks/:taskId', () => `/tasks/${task.id}`, () => cls.member],
    ['GET /classes/:classId', () => `/classes/${cls.classId}`, () => cls.member],
    ['GET /tasks/:taskId/submissions/me', () => `/tasks/${task.id}/submissions/me`, () => cls.member],
    ['GET /classes/:classId/tasks', () => `/classes/${cls.classId}/tasks`, () => cls.member],
    ['GET /tasks/mine', () => '/tasks/mine', () => cls.member],
    ['GET /users/me/notifications', () => '/users/me/notifications', () => cls.member],
  ];

  it.each(READS)('%s: an ETag; If-None-Match with it answers 304 without a body', async (_, path, user) => {
    const full = await get(path(), user());
    expect(full.status).toBe(200);
    // Each read answers something to tag (the member's inbox holds the task's announcement).
    expect(JSON.stringify(full.body)).toMatch(new RegExp(`${task.id}|${cls.classId}`));
    expect(full.headers.etag).toMatch(ETAG);
    const again = await get(path(), user());
    expect(again.headers.etag).toBe(full.headers.etag);

    for (const tags of [full.headers.etag, `"other", ${full.headers.etag}`, `W/${full.headers.etag}`, '*']) {
      const notModified = await get(path(), user(), tags);
      expect([tags, notModified.status, notModified.text]).toEqual([tags, 304, '']);
      expect(notModified.headers.etag).toBe(full.headers.etag);
    }
    // Browsers and Node's fetch add these to every request with If-None-Match; the precondition still holds.
    for (const [name, value] of [
      ['Cache-Control', 'no-cache'],
      ['Cache-Control', 'max-age=0, no-cache'],
      ['Pragma', 'no-cache'],
    ]) {
      const fromBrowser = await get(path(), user(), full.headers.etag).set(name, value);
      expect([name, value, fromBrowser.status, fromBrowser.text]).toEqual([name, value, 304, '']);
    }
    const stale = await get(path(), user(), '"stale"');
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual(full.body);
  });

  it('the tag follows the answer: a change makes the old tag stale; callers with other fields get other tags', async () => {
    const before = await get(`/tasks/${task.id}`, cls.member);
    const owners = await get(`/tasks/${task.id}`, cls.owner);
    expect(owners.headers.etag).not.toBe(before.headers.etag);
    await ctx.http
      .patch(`/tasks/${task.id}`)
      .set('Authorization', cls.admin.auth)
      .send({ description: 'changed' })
      .expect(200);
    const after = await get(`/tasks/${task.id}`, cls.member, before.headers.etag);
    expect(after.status).toBe(200);
    expect(after.body.description).toBe('changed');
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('an error answer carries no ETag', async () => {
    const res = await get(`/tasks/${task.id}`, cls.outsider, '*');
    expect(res.status).toBe(403);
    expect(res.headers.etag).toBeUndefined();
  });

  describe('If-Match on PATCH /tasks/:taskId', () => {
    const patch = (user: TestUser, ifMatch: string | undefined, body: object) => {
      const req = ctx.http.patch(`/tasks/${task.id}`).set('Authorization', user.auth);
      return (ifMatch === undefined ? req : req.set('If-Match', ifMatch)).send(body);
    };
    const tagOf = async (user: TestUser): Promise<string> =>
      (await get(`/tasks/${task.id}`, user)).headers.etag;

    it('OWNER and ADMIN write with the current tag (or *), the answer carrying the new tag', async () => {
      for (const user of [cls.owner, cls.admin]) {
        const current = await tagOf(user);
        const res = await patch(user, current, { title: `By ${user.id}` });
        expect(res.status).toBe(200);
        expect(res.headers.etag).toMatch(ETAG);
        expect(res.headers.etag).toBe(await tagOf(user));
        expect((await patch(user, '*', { title: 'Any' })).status).toBe(200);
      }
    });

    it('a stale or weak tag answers 412 PRECONDITION_FAILED and changes nothing', async () => {
      const current = await tagOf(cls.owner);
      await patch(cls.admin, undefined, { title: 'Moved on' }).expect(200);
      for (const tags of [current, `W/${await tagOf(cls.owner)}`, '"nonsense"', 'not a tag']) {
        const res = await patch(cls.owner, tags, { title: 'Lost update' });
        expect([tags, res.status, res.body]).toEqual([tags, 412, apiError('PRECONDITION_FAILED')]);
      }
      expect((await get(`/tasks/${task.id}`, cls.owner)).body.title).toBe('Moved on');
    });

    it('a MEMBER or a non-member is refused as without the header (403), not told about the tag', async () => {
      for (const user of [cls.member, cls.outsider]) {
        const res = await patch(user, '*', { title: 'Nope' });
        expect([res.status, res.body]).toEqual([403, apiError('FORBIDDEN')]);
      }
    });

    it('two writes with the same tag at once: exactly one succeeds, the other answers 412', async () => {
      for (let round = 0; round < 3; round += 1) {
        const current = await tagOf(cls.owner);
        const answers = await Promise.all([
          patch(cls.owner, current, { title: `Race A${round}` }),
          patch(cls.owner, current, { title: `Race B${round}` }),
        ]);
        expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
        const winner = answers.find((res) => res.status === 200)!;
        expect((await get(`/tasks/${task.id}`, cls.owner)).body.title).toBe(winner.body.title);
      }
    });
  });

  describe('If-Match on PATCH /classes/:classId', () => {
    const patch = (user: TestUser, ifMatch: string, body: object) =>
      ctx.http
        .patch(`/classes/${cls.classId}`)
        .set('Authorization', user.auth)
        .set('If-Match', ifMatch)
        .send(body);

    it('current tag → 200; stale → 412 and nothing changed; a MEMBER or non-member → 403', async () => {
      const current = (await get(`/classes/${cls.classId}`, cls.owner)).headers.etag;
      const ok = await patch(cls.owner, current, { description: 'v2' });
      expect(ok.status).toBe(200);
      const stale = await patch(cls.admin, current, { description: 'v3' });
      expect([stale.status, stale.body]).toEqual([412, apiError('PRECONDITION_FAILED')]);
      const admins = (await get(`/classes/${cls.classId}`, cls.admin)).headers.etag;
      expect((await patch(cls.admin, admins, { description: 'v3' })).status).toBe(200);
      expect((await get(`/classes/${cls.classId}`, cls.owner)).body.description).toBe('v3');
      for (const user of [cls.member, cls.outsider]) {
        const res = await patch(user, '*', { description: 'x' });
        expect([res.status, res.body]).toEqual([403, apiError('FORBIDDEN')]);
      }
    });

    it('two writes with the same tag at once: exactly one succeeds', async () => {
      const current = (await get(`/classes/${cls.classId}`, cls.owner)).headers.etag;
      const answers = await Promise.all([
        patch(cls.owner, current, { name: 'Race A' }),
        patch(cls.owner, current, { name: 'Race B' }),
      ]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
    });
  });

  describe('If-Match on PUT /tasks/:taskId/submissions/me', () => {
    const put = (user: TestUser, ifMatch: string, content: string) =>
      ctx.http
        .put(`/tasks/${task.id}/submissions/me`)
        .set('Authorization', user.auth)
        .set('If-Match', ifMatch)
        .send({ content });

    it('the tag of GET submissions/me is accepted; a stale one answers 412 and keeps the submission', async () => {
      const current = (await get(`/tasks/${task.id}/submissions/me`, cls.member)).headers.etag;
      const ok = await put(cls.member, current, 'second answer');
      expect(ok.status).toBe(200);
      expect(ok.headers.etag).toBe((await get(`/tasks/${task.id}/submissions/me`, cls.member)).headers.etag);
      const stale = await put(cls.member, current, 'third answer');
      expect([stale.status, stale.body]).toEqual([412, apiError('PRECONDITION_FAILED')]);
      expect((await get(`/tasks/${task.id}/submissions/me`, cls.member)).body.content).toBe('second answer');
      expect((await put(cls.member, '*', 'fourth answer')).status).toBe(200);
    });

    it('without a submission nothing is current: any tag, * too, answers 412 and creates nothing', async () => {
      const newcomer = await createUser(ctx);
      await addMember(ctx, cls.classId, newcomer);
      for (const tags of ['*', '"whatever"']) {
        const res = await put(newcomer, tags, 'never');
        expect([res.status, res.body]).toEqual([412, apiError('PRECONDITION_FAILED')]);
      }
      expect((await get(`/tasks/${task.id}/submissions/me`, newcomer)).status).toBe(404);
    });

    it('a non-member is refused with 403 whatever the tag', async () => {
      const res = await put(cls.outsider, '*', 'intruder');
      expect([res.status, res.body]).toEqual([403, apiError('FORBIDDEN')]);
    });

    it('two writes with the same tag at once: exactly one succeeds', async () => {
      const current = (await get(`/tasks/${task.id}/submissions/me`, cls.member)).headers.etag;
      const answers = await Promise.all([put(cls.member, current, 'A'), put(cls.member, current, 'B')]);
      expect(answers.map((res) => res.status).sort()).toEqual([200, 412]);
    });
  });
});
