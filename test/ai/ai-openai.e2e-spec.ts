import { FakeOpenAi, startFakeOpenAi } from '../fakes/openai-server';
import { createTestApp, TestApp } from '../utils/test-app';
import { ClassWithRoles, createClassWithRoles, createDraft } from '../utils/tasks';

const ALL_NULL = { title: null, timeOptions: null, allowLateSubmission: null, description: null };
const TIMEOUT_MS = 400;

describe('task parsing (AI_PROVIDER=openai)', () => {
  let ai: FakeOpenAi;
  let ctx: TestApp;
  let cls: ClassWithRoles;
  const parse = (text: string) =>
    ctx.http.post('/tasks/parse').set('Authorization', cls.owner.auth).send({ text });

  beforeAll(async () => {
    ai = await startFakeOpenAi();
    ctx = await createTestApp({
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.baseUrl,
      AI_API_KEY: 'sk-test-key',
      AI_MODEL: 'gpt-test',
      AI_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    cls = await createClassWithRoles(ctx, { owner: 'Asia/Shanghai' });
  });
  afterAll(async () => {
    await ctx.close();
    await ai.close();
  });

  it('sends a JSON-mode chat completion with key, model, text and the caller time zone; validates the answer', async () => {
    ai.reply({
      kind: 'json',
      value: {
        title: 'Essay',
        timeOptions: [
          { startAt: null, dueAt: '2030-03-06T17:00:00+08:00' },
          { startAt: '2030-03-01T00:00:00Z', dueAt: '2030-03-13T17:00:00+08:00' },
        ],
        allowLateSubmission: true,
        description: 'Write **300** words.',
        confidence: 0.9,
      },
    });
    const res = await parse('Essay due Friday 5pm, late work accepted');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      title: 'Essay',
      timeOptions: [
        { startAt: null, dueAt: '2030-03-06T09:00:00.000Z' },
        { startAt: '2030-03-01T00:00:00.000Z', dueAt: '2030-03-13T09:00:00.000Z' },
      ],
      allowLateSubmission: true,
      description: 'Write **300** words.',
    });
    const request = ai.requests.at(-1)!;
    expect(request.authorization).toBe('Bearer sk-test-key');
    expect(request.body.model).toBe('gpt-test');
    expect(request.body.response_format).toEqual({ type: 'json_object' });
    expect(request.body.messages?.[0].content).toContain('Asia/Shanghai');
    expect(request.body.messages?.[1]).toEqual({
      role: 'user',
      content: 'Essay due Friday 5pm, late work accepted',
    });
  });

  it('keeps the first 3 of more than 3 valid options', async () => {
    const options = [1, 2, 3, 4, 5].map((day) => ({ startAt: null, dueAt: `2030-03-0${day}T12:00:00Z` }));
    ai.reply({
      kind: 'json',
      value: { title: 'T', timeOptions: options, allowLateSubmission: null, description: null },
    });
    const res = await parse('several dates');
    expect(res.status).toBe(200);
    expect(res.body.timeOptions).toEqual(
      [1, 2, 3].map((day) => ({ startAt: null, dueAt: `2030-03-0${day}T12:00:00.000Z` })),
    );
  });

  it.each<[string, Parameters<FakeOpenAi['reply']>[0]]>([
    ['HTTP 500', { kind: 'status', status: 500 }],
    ['HTTP 429', { kind: 'status', status: 429 }],
    ['a body that is not JSON', { kind: 'garbage' }],
    ['message content that is not JSON', { kind: 'content', content: 'Sure! The task is due Friday.' }],
    [
      'JSON of the wrong shape',
      {
        kind: 'json',
        value: { title: 'T', timeOptions: 'Friday', allowLateSubmission: null, description: null },
      },
    ],
    [
      'a timestamp without offset',
      {
        kind: 'json',
        value: {
          title: 'T',
          timeOptions: [{ startAt: null, dueAt: '2030-03-06 17:00' }],
          allowLateSubmission: null,
          description: null,
        },
      },
    ],
    [
      'no time option',
      { kind: 'json', value: { title: 'T', timeOptions: [], allowLateSubmission: null, description: null } },
    ],
    [
      'a missing field',
      { kind: 'json', value: { title: 'T', timeOptions: [{ startAt: null, dueAt: null }] } },
    ],
  ])('answers 200 with every field null on %s', async (_case, reply) => {
    ai.reply(reply);
    const res = await parse('Essay due Friday');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(ALL_NULL);
  });

  it('gives up after AI_TIMEOUT_MS and answers every field null', async () => {
    ai.reply({ kind: 'hang' });
    const started = Date.now();
    const res = await parse('Essay due Friday');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(ALL_NULL);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
  });

  it('sends text attachments of a draft; a failed draft parse changes nothing and caches nothing', async () => {
    const draft = await createDraft(ctx, cls.classId, cls.owner, {
      title: 'Mine',
      sourceText: 'See the attached file',
    });
    await ctx.http
      .post(`/tasks/${draft.id}/attachments`)
      .set('Authorization', cls.owner.auth)
      .attach('file', Buffer.from('Due 2030-01-01'), { filename: 'notes.txt', contentType: 'text/plain' })
      .expect(201);
    ai.reply({ kind: 'status', status: 503 });
    const res = await ctx.http.post(`/tasks/${draft.id}/parse`).set('Authorization', cls.owner.auth).send({});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...ALL_NULL, markdownCached: false });
    expect(ai.requests.at(-1)!.body.messages?.[1].content).toBe(
      'See the attached file\n\n--- Attached file "notes.txt" ---\nDue 2030-01-01',
    );
    const stored = (await ctx.http.get(`/tasks/${draft.id}`).set('Authorization', cls.owner.auth)).body;
    expect(stored).toMatchObject({ title: 'Mine', description: null, startAt: null, dueAt: null });
  });
});
