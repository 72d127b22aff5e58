import { PARSES_PER_USER_PER_HOUR } from '../../src/common/throttling/throttles';
import { TaskDraftsService } from '../../src/tasks/task-drafts.service';
import { apiError as error } from '../utils/expect';
import { useTestApp } from '../utils/test-app';
import {
  ClassWithRoles,
  createClassWithRoles,
  createDraft,
  createTask,
  uploadTaskAttachment,
} from '../utils/tasks';
import { createUser, TestUser } from '../utils/users';

describe('task parsing (local provider)', () => {
  const ctx = useTestApp();
  let cls: ClassWithRoles;

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx, { owner: 'Asia/Shanghai', member: 'America/New_York' });
  });

  describe('POST /tasks/parse', () => {
    const parse = (user: TestUser | null, body: object) => {
      const req = ctx.http.post('/tasks/parse');
      return user ? req.set('Authorization', user.auth).send(body) : req.send(body);
    };

    it('answers the suggested fields for any logged-in user, read in their time zone', async () => {
      const text = 'Lab report\nDue 2030-03-20 17:00. No late submissions.';
      const shanghai = await parse(cls.owner, { text });
      expect(shanghai.status).toBe(200);
      expect(shanghai.body).toEqual({
        title: 'Lab report',
        timeOptions: [{ startAt: null, dueAt: '2030-03-20T09:00:00.000Z' }],
        allowLateSubmission: false,
        description: 'Due 2030-03-20 17:00. No late submissions.',
      });
      const newYork = await parse(cls.member, { text });
      expect(newYork.status).toBe(200);
      expect(newYork.body.timeOptions).toEqual([{ startAt: null, dueAt: '2030-03-20T21:00:00.000Z' }]);
      // A user in no class at all may parse too.
      expect((await parse(await createUser(ctx), { text })).status).toBe(200);
    });

    it('answers several options for ambiguous text', async () => {
      const res = await parse(cls.owner, { text: 'Quiz due 3/4/2031 at 9am' });
      expect(res.body.timeOptions).toEqual([
        { startAt: null, dueAt: '2031-03-04T01:00:00.000Z' },
        { startAt: null, dueAt: '2031-04-03T01:00:00.000Z' },
      ]);
    });

    it('refuses missing, empty, too long and unknown fields with 400', async () => {
      for (const body of [
        {},
        { text: '' },
        { text: 'x'.repeat(20_001) },
        { text: 42 },
        { text: 'ok', extra: 1 },
      ]) {
        const res = await parse(cls.owner, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(error('VALIDATION_ERROR'));
      }
      expect((await parse(cls.owner, { text: 'x'.repeat(20_000) })).status).toBe(200);
    });

    it('needs a token', async () => {
      const res = await parse(null, { text: 'due Friday' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(error('UNAUTHORIZED'));
    });

    it(`allows ${PARSES_PER_USER_PER_HOUR} parses per account and hour, each route its own count, then 429`, async () => {
      const [user, other] = [await createUser(ctx), await createUser(ctx)];
      const results = await Promise.all(
        Array.from({ length: PARSES_PER_USER_PER_HOUR }, () => parse(user, { text: 'due Friday' })),
      );
      expect(results.every((res) => res.status === 200)).toBe(true);
      const blocked = await parse(user, { text: 'due Friday' });
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual(error('RATE_LIMITED'));
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(60);
      expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(3600);
      expect((await parse(other, { text: 'due Friday' })).status).toBe(200);
      const [{ id: classId }] = (await ctx.http.get('/classes').set('Authorization', user.auth)).body;
      const draft = await createDraft(ctx, classId, user, { sourceText: 'due Friday' });
      await ctx.http.post(`/tasks/${draft.id}/parse`).set('Authorization', user.auth).send({}).expect(200);
    });

    it('keeps answering other requests while a long text is parsed (off the event loop)', async () => {
      // Dense numeric dates, chrono-node's slowest input: a few hundred milliseconds of CPU.
      const text = 'Quiz 3/4 9am, 5/6 10:00, 7/8 '.repeat(700).slice(0, 20_000);
      const started = performance.now();
      let parsed = false;
      const parsing = parse(cls.owner, { text }).then((res) => {
        parsed = true;
        return res;
      });
      const pingTimes: number[] = [];
      while (!parsed) {
        const sent = performance.now();
        expect((await ctx.http.get('/health/live')).status).toBe(200);
        pingTimes.push(performance.now() - sent);
      }
      const res = await parsing;
      const parseTime = performance.now() - started;
      expect(res.status).toBe(200);
      expect(res.body.timeOptions).toEqual([
        { startAt: null, dueAt: '2027-03-04T01:00:00.000Z' },
        { startAt: null, dueAt: '2027-04-03T01:00:00.000Z' },
      ]);
      // Parsed on the event loop, a health check sent meanwhile would wait for the whole parse.
      expect(Math.max(...pingTimes)).toBeLessThan(parseTime / 2);
    });
  });

  describe('POST /tasks/:taskId/parse and GET /tasks/:taskId/draft-markdown', () => {
    const parseDraft = (user: TestUser, taskId: string, body: object = {}) =>
      ctx.http.post(`/tasks/${taskId}/parse`).set('Authorization', user.auth).send(body);
    const markdownOf = (user: TestUser, taskId: string) =>
      ctx.http.get(`/tasks/${taskId}/draft-markdown`).set('Authorization', user.auth);

    it('fills the draft from the text, caches the Markdown and keeps the text as sourceText', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner);
      const text =
        'Essay on the sea\nStarts 2030-05-01 08:00, due 2030-05-10 17:00.\n- 500 words\n- cite sources';
      const res = await parseDraft(cls.admin, draft.id, { text });
      expect(res.status).toBe(200);
      const description = 'Starts 2030-05-01 08:00, due 2030-05-10 17:00.\n\n- 500 words\n- cite sources';
      expect(res.body).toEqual({
        title: 'Essay on the sea',
        timeOptions: [{ startAt: '2030-05-01T08:00:00.000Z', dueAt: '2030-05-10T17:00:00.000Z' }],
        allowLateSubmission: null,
        description,
        markdownCached: true,
      });
      const stored = await ctx.http.get(`/tasks/${draft.id}`).set('Authorization', cls.owner.auth);
      expect(stored.body).toMatchObject({
        title: 'Essay on the sea',
        startAt: '2030-05-01T08:00:00.000Z',
        dueAt: '2030-05-10T17:00:00.000Z',
        description,
        sourceText: text,
        isPublished: false,
      });
      expect((await markdownOf(cls.owner, draft.id)).body).toEqual({ markdown: description });
    });

    it('parses the stored sourceText when no text is given; null fields leave the draft as it was', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, {
        title: 'Kept title',
        dueAt: '2030-06-01T00:00:00.000Z',
        sourceText: 'Read chapter 4 carefully',
      });
      const res = await parseDraft(cls.owner, draft.id);
      expect(res.status).toBe(200);
      expect(res.body.timeOptions).toEqual([{ startAt: null, dueAt: null }]);
      const stored = (await ctx.http.get(`/tasks/${draft.id}`).set('Authorization', cls.owner.auth)).body;
      expect(stored).toMatchObject({
        title: 'Read chapter 4 carefully',
        dueAt: '2030-06-01T00:00:00.000Z',
        sourceText: 'Read chapter 4 carefully',
      });
    });

    it('reads text-like attachments (text/*, .md, .txt, .csv) and ignores other files', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { sourceText: 'Poster project' });
      await uploadTaskAttachment(ctx, draft.id, cls.owner, {
        name: 'scan.pdf',
        content: 'due 2030-01-02 10:00',
        contentType: 'application/pdf',
      });
      await uploadTaskAttachment(ctx, draft.id, cls.owner, {
        name: '要求.md',
        content: '# Rules\nHand in by 2030-07-08 12:00. Late submissions allowed.',
        contentType: 'application/octet-stream',
      });
      const res = await parseDraft(cls.owner, draft.id);
      expect(res.status).toBe(200);
      expect(res.body.timeOptions).toEqual([{ startAt: null, dueAt: '2030-07-08T04:00:00.000Z' }]);
      expect(res.body.allowLateSubmission).toBe(true);
      expect(res.body.title).toBe('Poster project');
    });

    it('clears a stored start that the parsed due time would precede', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { startAt: '2030-09-01T00:00:00.000Z' });
      await parseDraft(cls.owner, draft.id, { text: 'Quiz due 2030-08-01 12:00' }).expect(200);
      const stored = (await ctx.http.get(`/tasks/${draft.id}`).set('Authorization', cls.owner.auth)).body;
      expect(stored).toMatchObject({ startAt: null, dueAt: '2030-08-01T04:00:00.000Z' });
    });

    it('refuses published tasks and drafts without text (400)', async () => {
      const published = await createTask(ctx, cls.classId, cls.owner);
      expect((await parseDraft(cls.owner, published.id, { text: 'due Friday' })).body).toEqual(
        error('VALIDATION_ERROR'),
      );
      const empty = await createDraft(ctx, cls.classId, cls.owner);
      const res = await parseDraft(cls.owner, empty.id);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(error('VALIDATION_ERROR'));
      expect((await parseDraft(cls.owner, empty.id, { text: '' })).status).toBe(400);
      expect((await parseDraft(cls.owner, empty.id, { text: 'x'.repeat(20_001) })).status).toBe(400);
    });

    it('is for OWNER and ADMIN only', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { sourceText: 'Essay due 2030-01-01' });
      const published = await createTask(ctx, cls.classId, cls.owner);
      // A MEMBER cannot see a draft at all (404); a visible task is 403.
      expect((await parseDraft(cls.member, draft.id)).body).toEqual(error('NOT_FOUND'));
      expect((await markdownOf(cls.member, draft.id)).body).toEqual(error('NOT_FOUND'));
      const memberParse = await parseDraft(cls.member, published.id, { text: 'x' });
      expect(memberParse.status).toBe(403);
      expect(memberParse.body).toEqual(error('FORBIDDEN'));
      expect((await markdownOf(cls.member, published.id)).body).toEqual(error('FORBIDDEN'));
      expect((await parseDraft(cls.outsider, draft.id)).body).toEqual(error('FORBIDDEN'));
      expect((await markdownOf(cls.outsider, draft.id)).body).toEqual(error('FORBIDDEN'));
      expect((await ctx.http.post(`/tasks/${draft.id}/parse`).send({})).status).toBe(401);
      expect((await ctx.http.get(`/tasks/${draft.id}/draft-markdown`)).status).toBe(401);
      expect((await parseDraft(cls.owner, 'not-a-uuid')).body).toEqual(error('VALIDATION_ERROR'));
      expect((await markdownOf(cls.owner, '00000000-0000-4000-8000-000000000000')).body).toEqual(
        error('NOT_FOUND'),
      );
    });

    it('answers null Markdown before any parse, after publication and once expired; purges expired rows', async () => {
      const draft = await createDraft(ctx, cls.classId, cls.owner, { sourceText: 'Essay\nWrite 300 words.' });
      expect((await markdownOf(cls.owner, draft.id)).body).toEqual({ markdown: null });
      await parseDraft(cls.owner, draft.id).expect(200);
      expect((await markdownOf(cls.owner, draft.id)).body).toEqual({ markdown: 'Write 300 words.' });

      await ctx.db.query(
        `UPDATE task_markdown_cache SET expires_at = now() - interval '1 second' WHERE task_id = $1`,
        [draft.id],
      );
      expect((await markdownOf(cls.owner, draft.id)).body).toEqual({ markdown: null });
      const count = async () =>
        (
          await ctx.db.query(`SELECT count(*)::int AS n FROM task_markdown_cache WHERE task_id = $1`, [
            draft.id,
          ])
        )[0].n;
      expect(await count()).toBe(1);
      expect(await ctx.app.get(TaskDraftsService).purgeExpiredMarkdown()).toBeGreaterThanOrEqual(1);
      expect(await count()).toBe(0);

      await parseDraft(cls.owner, draft.id).expect(200);
      const [{ expires_in_hours }] = await ctx.db.query(
        `SELECT round(extract(epoch FROM expires_at - now()) / 3600) AS expires_in_hours FROM task_markdown_cache WHERE task_id = $1`,
        [draft.id],
      );
      expect(Number(expires_in_hours)).toBe(72);
      await ctx.http
        .post(`/tasks/${draft.id}/publish`)
        .set('Authorization', cls.owner.auth)
        .send({})
        .expect(200);
      expect((await markdownOf(cls.owner, draft.id)).body).toEqual({ markdown: null });
      expect(await count()).toBe(0);
    });
  });
});
