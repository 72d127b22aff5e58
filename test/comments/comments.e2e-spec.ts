import { createHash } from 'node:crypto';
import request from 'supertest';
import { COMMENTS_PER_USER_PER_MINUTE } from '../../src/common/throttling/throttles';
import { startWebhookReceiver, WebhookReceiver } from '../fakes/webhook-receiver';
import { addMember, ClassWithMembers, createClassWithMembers } from '../utils/classes';
import { apiError as error, ISO_TIMESTAMP, UUID_PATTERN } from '../utils/expect';
import { FAST_NOTIFICATIONS, inbox, notificationsOfTask, setPref, waitFor } from '../utils/notifications';
import { createDraft, createTask, FUTURE, UNKNOWN_ID } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

interface CommentAuthorJson {
  id: string;
  nickname: string | null;
  avatarHash: string;
}

interface CommentJson {
  id: string;
  taskId: string;
  content: string;
  createdAt: string;
  author: CommentAuthorJson | null;
  replyTo: { id: string; content: string; author: CommentAuthorJson | null } | null;
  authorId: string;
  nickname: string | null;
  avatarHash: string;
  replyToId: string | null;
}

const avatarOf = (user: TestUser): string =>
  createHash('sha256').update(user.email.toLowerCase()).digest('hex');

describe('task comments', () => {
  const ctx = useTestApp(FAST_NOTIFICATIONS);
  let room: ClassWithMembers;
  let classmate: TestUser;
  let receiver: WebhookReceiver;

  const comments = (taskId: string) => `/tasks/${taskId}/comments`;
  const as = (req: request.Test, user: TestUser | null): request.Test =>
    user ? req.set('Authorization', user.auth) : req;
  const list = (taskId: string, user: TestUser | null, query: Record<string, string | number> = {}) =>
    as(ctx.http.get(comments(taskId)).query(query), user);
  const post = (taskId: string, user: TestUser | null, body: object) =>
    as(ctx.http.post(comments(taskId)), user).send(body);
  const remove = (taskId: string, commentId: string, user: TestUser | null) =>
    as(ctx.http.delete(`${comments(taskId)}/${commentId}`), user);
  const comment = async (taskId: string, user: TestUser, content = 'A comment', replyToId?: string) =>
    (await post(taskId, user, { content, replyToId }).expect(201)).body as CommentJson;
  const listIds = async (taskId: string, user: TestUser): Promise<string[]> =>
    (await list(taskId, user).expect(200)).body.comments.map((item: CommentJson) => item.id);

  beforeAll(async () => {
    room = await createClassWithMembers(ctx, { name: 'Chemistry' });
    classmate = await createUser(ctx, { nickname: 'Classmate' });
    await addMember(ctx, room.cls.id, classmate);
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  describe('reading and writing', () => {
    it('lets OWNER, ADMIN and MEMBER comment on a published task and read every comment, with the author', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner);
      const written: CommentJson[] = [];
      for (const user of [room.owner, room.admin, room.member]) {
        const res = await post(task.id, user, { content: `  Hello from ${user.email}\n\n` });
        expect(res.status).toBe(201);
        const author = { id: user.id, nickname: expect.any(String), avatarHash: avatarOf(user) };
        expect(res.body).toEqual({
          id: expect.stringMatching(UUID_PATTERN),
          taskId: task.id,
          content: `Hello from ${user.email}`,
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
          author,
          replyTo: null,
          authorId: user.id,
          nickname: author.nickname,
          avatarHash: author.avatarHash,
          replyToId: null,
        });
        written.push(res.body);
      }
      expect(written.map((c) => [c.nickname, c.author?.nickname])).toEqual([
        ['Owner', 'Owner'],
        ['Admin', 'Admin'],
        ['Member', 'Member'],
      ]);
      for (const user of [room.owner, room.admin, room.member]) {
        const res = await list(task.id, user);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ comments: written, nextCursor: null });
      }
    });

    it('refuses a non-member (403), no token (401), an unknown task (404) and a malformed task id (400)', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner);
      const target = await comment(task.id, room.member);
      for (const res of [
        await list(task.id, room.outsider),
        await post(task.id, room.outsider, { content: 'hi' }),
        await remove(task.id, target.id, room.outsider),
      ]) {
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
      for (const res of [
        await list(task.id, null),
        await post(task.id, null, { content: 'hi' }),
        await remove(task.id, target.id, null),
      ]) {
        expect([res.status, res.body]).toEqual([401, error('UNAUTHORIZED')]);
      }
      for (const res of [
        await list(UNKNOWN_ID, room.owner),
        await post(UNKNOWN_ID, room.owner, { content: 'hi' }),
        await remove(UNKNOWN_ID, target.id, room.owner),
      ]) {
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
      for (const res of [await list('nope', room.owner), await post('nope', room.owner, { content: 'hi' })]) {
        expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      }
      expect(await listIds(task.id, room.owner)).toEqual([target.id]);
    });

    it('keeps drafts and scheduled tasks to OWNER and ADMIN: a MEMBER gets 404 as for the task', async () => {
      const draft = await createDraft(ctx, room.cls.id, room.owner, { title: 'Draft' });
      const scheduled = await createTask(ctx, room.cls.id, room.owner, { startAt: FUTURE });
      for (const task of [draft, scheduled]) {
        const byOwner = await comment(task.id, room.owner, 'For the teachers');
        const byAdmin = await comment(task.id, room.admin, 'Agreed');
        expect(await listIds(task.id, room.admin)).toEqual([byOwner.id, byAdmin.id]);
        for (const res of [
          await list(task.id, room.member),
          await post(task.id, room.member, { content: 'hi' }),
          await remove(task.id, byOwner.id, room.member),
        ]) {
          expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
        }
      }
    });

    it('answers 404 for everyone once the task is deleted, and removes the comments with the task', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner);
      await comment(task.id, room.member);
      await ctx.http.delete(`/tasks/${task.id}`).set('Authorization', room.owner.auth).expect(204);
      for (const user of [room.owner, room.admin, room.member]) {
        expect((await list(task.id, user)).status).toBe(404);
      }
      const [{ count }] = await ctx.db.query(`SELECT count(*)::int FROM task_comments WHERE task_id = $1`, [
        task.id,
      ]);
      expect(count).toBe(0);
    });
  });

  describe('rate limit', () => {
    it(`allows ${COMMENTS_PER_USER_PER_MINUTE} comments per account and minute over all tasks, then 429`, async () => {
      const [talker, other] = [await createUser(ctx), await createUser(ctx)];
      for (const user of [talker, other]) await addMember(ctx, room.cls.id, user);
      const tasks = [
        await createTask(ctx, room.cls.id, room.owner),
        await createTask(ctx, room.cls.id, room.owner),
      ];
      const results = await Promise.all(
        Array.from({ length: COMMENTS_PER_USER_PER_MINUTE }, (_, i) =>
          post(tasks[i % 2].id, talker, { content: `Comment ${i}` }),
        ),
      );
      expect(results.map((res) => res.status)).toEqual(Array(COMMENTS_PER_USER_PER_MINUTE).fill(201));

      const blocked = await post(tasks[0].id, talker, { content: 'One too many' });
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual(error('RATE_LIMITED'));
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
      const stored = await ctx.db.query(
        `SELECT count(*)::int AS count FROM task_comments WHERE author_id = $1`,
        [talker.id],
      );
      expect(stored[0].count).toBe(COMMENTS_PER_USER_PER_MINUTE);
      // Reading is not limited, and every other account keeps its own count.
      await list(tasks[0].id, talker).expect(200);
      await post(tasks[0].id, other, { content: 'My first' }).expect(201);
    });
  });

  describe('content and replyToId', () => {
    let taskId: string;
    beforeAll(async () => {
      taskId = (await createTask(ctx, room.cls.id, room.owner)).id;
    });

    it.each([
      ['missing content', {}],
      ['empty content', { content: '' }],
      ['only white space', { content: ' \n\t ' }],
      ['content over 10,000 characters', { content: 'x'.repeat(10_001) }],
      ['content not a string', { content: 42 }],
      ['null content', { content: null }],
      ['a malformed replyToId', { content: 'hi', replyToId: 'first' }],
      ['an unknown field', { content: 'hi', pinned: true }],
    ])('answers 400 for %s', async (_case, body) => {
      const res = await post(taskId, room.member, body);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
    });

    it('takes 10,000 characters', async () => {
      expect((await comment(taskId, room.member, 'y'.repeat(10_000))).content).toHaveLength(10_000);
    });

    it('takes a reply to a comment of the same task; a comment of another task or none is 400', async () => {
      const question = await comment(taskId, room.member, 'Which chapter?');
      const answer = await comment(taskId, room.admin, 'Chapter 3', question.id);
      expect(answer.replyToId).toBe(question.id);
      const replyTo = {
        id: question.id,
        content: 'Which chapter?',
        author: { id: room.member.id, nickname: 'Member', avatarHash: avatarOf(room.member) },
      };
      expect(answer.replyTo).toEqual(replyTo);
      const listed: CommentJson[] = (await list(taskId, room.owner, { limit: 100 }).expect(200)).body
        .comments;
      expect(listed.find((item) => item.id === answer.id)?.replyTo).toEqual(replyTo);
      expect((await comment(taskId, room.member, 'Thanks', question.id.toUpperCase())).replyToId).toBe(
        question.id,
      );

      const otherTask = await createTask(ctx, room.cls.id, room.owner);
      const elsewhere = await comment(otherTask.id, room.member, 'Elsewhere');
      for (const replyToId of [elsewhere.id, UNKNOWN_ID]) {
        const res = await post(taskId, room.member, { content: 'Re', replyToId });
        expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
      }
      expect((await post(taskId, room.member, { content: 'No reply', replyToId: null })).status).toBe(201);
    });
  });

  describe('deletion', () => {
    let taskId: string;
    beforeAll(async () => {
      taskId = (await createTask(ctx, room.cls.id, room.owner)).id;
    });

    it('lets the author delete their own comment', async () => {
      for (const user of [room.member, room.admin, room.owner]) {
        const own = await comment(taskId, user);
        expect((await remove(taskId, own.id, user)).status).toBe(204);
        expect(await listIds(taskId, user)).not.toContain(own.id);
      }
    });

    it("lets OWNER and ADMIN delete anyone's comment", async () => {
      for (const [author, deleter] of [
        [room.member, room.admin],
        [room.member, room.owner],
        [room.owner, room.admin],
        [room.admin, room.owner],
      ]) {
        const target = await comment(taskId, author);
        expect((await remove(taskId, target.id, deleter)).status).toBe(204);
      }
    });

    it("refuses a MEMBER deleting another's comment (403) and leaves it", async () => {
      for (const author of [classmate, room.admin, room.owner]) {
        const target = await comment(taskId, author);
        const res = await remove(taskId, target.id, room.member);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
        expect(await listIds(taskId, room.owner)).toContain(target.id);
      }
    });

    it('answers 404 for an unknown comment, a deleted one, and one of another task; 400 for a malformed id', async () => {
      const target = await comment(taskId, room.member);
      await remove(taskId, target.id, room.member).expect(204);
      const otherTask = await createTask(ctx, room.cls.id, room.owner);
      const elsewhere = await comment(otherTask.id, room.member);
      for (const commentId of [UNKNOWN_ID, target.id, elsewhere.id]) {
        const res = await remove(taskId, commentId, room.owner);
        expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
      }
      expect(await listIds(otherTask.id, room.owner)).toEqual([elsewhere.id]);
      const res = await remove(taskId, 'abc', room.owner);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
    });

    it('keeps the replies of a deleted comment, with replyToId null', async () => {
      const question = await comment(taskId, room.member, 'Question');
      const answer = await comment(taskId, room.admin, 'Answer', question.id);
      await remove(taskId, question.id, room.member).expect(204);
      const items: CommentJson[] = (await list(taskId, room.owner, { limit: 100 }).expect(200)).body.comments;
      expect(items.find((item) => item.id === answer.id)).toMatchObject({
        content: 'Answer',
        replyTo: null,
        replyToId: null,
      });
    });
  });

  describe('pages', () => {
    let taskId: string;
    let written: string[];
    beforeAll(async () => {
      // A member of its own: room.member's comments of the tests above count to its per-minute limit.
      const writer = await createUser(ctx);
      await addMember(ctx, room.cls.id, writer);
      taskId = (await createTask(ctx, room.cls.id, room.owner)).id;
      written = [];
      for (let i = 0; i < 5; i += 1) written.push((await comment(taskId, writer, `Comment ${i}`)).id);
    });

    it('lists oldest first in pages of `limit`, with a cursor until the last page', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: request.Response = await list(
          taskId,
          room.member,
          cursor ? { limit: 2, cursor } : { limit: 2 },
        ).expect(200);
        seen.push(...res.body.comments.map((item: CommentJson) => item.id));
        cursor = res.body.nextCursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(written);
      expect((await list(taskId, room.member, { limit: 5 }).expect(200)).body.nextCursor).toBeNull();
    });

    it('continues after a cursor whose comment was deleted meanwhile', async () => {
      const first = await list(taskId, room.owner, { limit: 2 }).expect(200);
      const extra = await comment(taskId, room.member, 'Late');
      await remove(taskId, first.body.comments[1].id, room.owner).expect(204);
      const next = await list(taskId, room.owner, { limit: 10, cursor: first.body.nextCursor }).expect(200);
      expect(next.body.comments.map((item: CommentJson) => item.id)).toEqual([...written.slice(2), extra.id]);
    });

    it.each([
      ['limit 0', { limit: 0 }],
      ['limit 101', { limit: 101 }],
      ['a non-numeric limit', { limit: 'ten' }],
      ['a cursor that is not one', { cursor: 'bm90LWEtY3Vyc29y' }],
      ['a cursor with characters outside base64url', { cursor: 'a+b/c' }],
      [
        'a cursor past any timestamp',
        { cursor: Buffer.from(`9999999999999999999.${UNKNOWN_ID}`).toString('base64url') },
      ],
    ])('answers 400 for %s', async (_case, query) => {
      const res = await list(taskId, room.member, query);
      expect([res.status, res.body]).toEqual([400, error('VALIDATION_ERROR')]);
    });
  });

  describe('TASK_COMMENT notifications', () => {
    const ofComment = async (taskId: string, commentId: string) =>
      (await notificationsOfTask(ctx, taskId)).filter(
        (row) => row.type === 'TASK_COMMENT' && (row as { comment_id?: string }).comment_id === commentId,
      );

    it("reach the OWNER and ADMINs, not the author nor other members, through the inbox and the recipient's channels", async () => {
      const path = `/comments-${Date.now()}`;
      const pref = await setPref(ctx, room.admin, { channel: 'WEBHOOK', address: receiver.url(path) });
      receiver.setSecret(path, pref.secret!);
      const task = await createTask(ctx, room.cls.id, room.owner, { title: 'Titration' });
      const posted = await comment(task.id, room.member, 'Is the   indicator\nprovided?');

      const rows = await waitFor('2 sent TASK_COMMENT notifications', async () => {
        const found = await ofComment(task.id, posted.id);
        return found.length === 2 && found.every((row) => row.status === 'SENT') && found;
      });
      expect(rows.map((row) => row.user_id).sort()).toEqual([room.owner.id, room.admin.id].sort());

      const item = (await inbox(ctx, room.owner)).items.find(
        (entry) => entry.taskId === task.id && entry.type === 'TASK_COMMENT',
      );
      expect(item).toEqual({
        id: rows.find((row) => row.user_id === room.owner.id)!.id,
        type: 'TASK_COMMENT',
        taskId: task.id,
        classId: room.cls.id,
        taskTitle: 'Titration',
        className: 'Chemistry',
        title: 'New comment on Titration',
        content: 'Member commented on "Titration" in Chemistry: Is the indicator provided?',
        readAt: null,
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
      });
      for (const user of [room.member, classmate]) {
        const items = (await inbox(ctx, user)).items;
        expect(items.filter((entry) => entry.taskId === task.id && entry.type === 'TASK_COMMENT')).toEqual(
          [],
        );
      }

      const hook = await waitFor('the TASK_COMMENT webhook', async () =>
        // Earlier tests' comments in this class may reach the owner's hook too: this task's is the one.
        receiver.received.find((hit) => {
          const body = hit.body as { type: string; data: { taskId?: string } };
          return hit.path === path && body.type === 'TASK_COMMENT' && body.data.taskId === task.id;
        }),
      );
      expect(hook.status).toBeLessThan(300);
      expect(hook.verified).toBe(true);
      expect(hook.body).toMatchObject({
        type: 'TASK_COMMENT',
        data: { taskId: task.id, taskTitle: 'Titration', classId: room.cls.id, className: 'Chemistry' },
      });
    });

    it('reach the author of the comment replied to, with a reply title, and never the one replying', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner, { title: 'Kinetics' });
      const question = await comment(task.id, room.member, 'Question');
      const answer = await comment(task.id, room.owner, 'x'.repeat(300), question.id);
      const rows = await waitFor('2 TASK_COMMENT notifications of the answer', async () => {
        const found = await ofComment(task.id, answer.id);
        return found.length === 2 && found;
      });
      const byUser = new Map(rows.map((row) => [row.user_id, row]));
      expect([...byUser.keys()].sort()).toEqual([room.member.id, room.admin.id].sort());
      expect(byUser.get(room.member.id)!.title).toBe('Owner replied to your comment on Kinetics');
      expect(byUser.get(room.admin.id)!.title).toBe('New comment on Kinetics');
      // The text quotes at most 200 characters of the comment.
      expect(byUser.get(room.member.id)!.content).toBe(
        `Owner commented on "Kinetics" in Chemistry: ${'x'.repeat(199)}…`,
      );

      // A reply to one's own comment notifies only the teachers.
      const followUp = await comment(task.id, room.member, 'Never mind', question.id);
      const own = await waitFor('TASK_COMMENT notifications of the follow-up', async () => {
        const found = await ofComment(task.id, followUp.id);
        return found.length === 2 && found;
      });
      expect(own.map((row) => row.user_id).sort()).toEqual([room.owner.id, room.admin.id].sort());
    });

    it('are withdrawn from the inbox when the comment is deleted', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner);
      const posted = await comment(task.id, classmate, 'Oops, wrong task');
      await waitFor('sent notifications', async () => {
        const found = await ofComment(task.id, posted.id);
        return found.length === 2 && found.every((row) => row.status === 'SENT');
      });
      await remove(task.id, posted.id, classmate).expect(204);
      expect(await ofComment(task.id, posted.id)).toEqual([]);
      const items = (await inbox(ctx, room.admin, { limit: 50 })).items;
      expect(items.filter((entry) => entry.taskId === task.id && entry.type === 'TASK_COMMENT')).toEqual([]);
    });
  });
});
