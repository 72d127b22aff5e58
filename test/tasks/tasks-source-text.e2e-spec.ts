import { apiError as error } from '../utils/expect';
import { useTestApp } from '../utils/test-app';
import { ClassWithRoles, createClassWithRoles, createDraft, createTask, taskApi } from '../utils/tasks';

/** The AI-parse → edit path of the web client sends sourceText with PATCH and publication. */
describe('tasks: sourceText on PATCH /tasks/:taskId and POST /tasks/:taskId/publish', () => {
  const ctx = useTestApp();
  const { call, detail } = taskApi(() => ctx);
  let cls: ClassWithRoles;

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx);
  });

  it('PATCH stores sourceText on a draft, and the draft parse uses it as its text', async () => {
    const draft = await createDraft(ctx, cls.classId, cls.owner, { sourceText: 'old text' });
    const res = await call('patch', `/tasks/${draft.id}`, cls.admin, {
      title: 'Lab report',
      sourceText: 'Lab report\nDue 2030-03-20 17:00',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'Lab report', sourceText: 'Lab report\nDue 2030-03-20 17:00' });
    expect((await detail(draft.id, cls.owner)).sourceText).toBe('Lab report\nDue 2030-03-20 17:00');
    const parsed = await call('post', `/tasks/${draft.id}/parse`, cls.owner, {}).expect(200);
    expect(parsed.body.timeOptions[0].dueAt).toBe('2030-03-20T17:00:00.000Z');
  });

  it('PATCH sets and clears (null) sourceText on a published task; leaving it out keeps it', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    await call('patch', `/tasks/${task.id}`, cls.owner, { sourceText: 'from the parser' }).expect(200);
    const kept = await call('patch', `/tasks/${task.id}`, cls.owner, { title: 'Renamed' }).expect(200);
    expect(kept.body).toMatchObject({ title: 'Renamed', sourceText: 'from the parser' });
    const cleared = await call('patch', `/tasks/${task.id}`, cls.owner, { sourceText: null }).expect(200);
    expect(cleared.body.sourceText).toBeNull();
  });

  it('publication takes sourceText with the other fields, and keeps it on the published task', async () => {
    const draft = await createDraft(ctx, cls.classId, cls.owner, { title: 'Essay' });
    const res = await call('post', `/tasks/${draft.id}/publish`, cls.owner, {
      sourceText: 'Essay, 300 words, due Friday',
      allowLateSubmission: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      isPublished: true,
      allowLateSubmission: false,
      sourceText: 'Essay, 300 words, due Friday',
    });
    expect((await detail(draft.id, cls.member)).sourceText).toBe('Essay, 300 words, due Friday');
  });

  it.each([
    ['over 20,000 characters', { sourceText: 'x'.repeat(20_001) }],
    ['a number', { sourceText: 42 }],
  ])('answers 400 VALIDATION_ERROR for sourceText %s, on PATCH and publish alike', async (_case, body) => {
    const draft = await createDraft(ctx, cls.classId, cls.owner, { sourceText: 'kept' });
    for (const path of [`/tasks/${draft.id}`, `/tasks/${draft.id}/publish`]) {
      const method = path.endsWith('/publish') ? 'post' : 'patch';
      const res = await call(method, path, cls.owner, body);
      expect([path, res.status, res.body]).toEqual([path, 400, error('VALIDATION_ERROR')]);
    }
    expect(await detail(draft.id, cls.owner)).toMatchObject({ sourceText: 'kept', isPublished: false });
  });

  it('answers 403 FORBIDDEN to a MEMBER and to a non-member, changing nothing', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    for (const user of [cls.member, cls.outsider]) {
      for (const [method, path] of [
        ['patch', `/tasks/${task.id}`],
        ['post', `/tasks/${task.id}/publish`],
      ] as const) {
        const res = await call(method, path, user, { sourceText: 'mine' });
        expect([path, res.status, res.body]).toEqual([path, 403, error('FORBIDDEN')]);
      }
    }
    expect((await detail(task.id, cls.owner)).sourceText).toBeNull();
  });
});
