import { apiError } from '../utils/expect';
import { storedFileKeys } from '../utils/submissions';
import { createClassWithRoles, ClassWithRoles, createDraft, createTask, UNKNOWN_ID } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { TestUser } from '../utils/users';

/** Conformance review: cross-cutting rules of the specification, checked through HTTP and OpenAPI. */

/** Small enough that a refused caller's file would be over the limit. */
const UPLOAD_MAX_BYTES = 1024;
const OVERSIZE = Buffer.alloc(4 * UPLOAD_MAX_BYTES, 'x');
const SMALL = Buffer.from('hello');

describe('Conformance', () => {
  let ctx: TestApp;
  let roles: ClassWithRoles;
  let taskId: string;
  let draftId: string;

  beforeAll(async () => {
    ctx = await createTestApp({ UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES) });
    roles = await createClassWithRoles(ctx);
    taskId = (await createTask(ctx, roles.classId, roles.owner)).id;
    draftId = (await createDraft(ctx, roles.classId, roles.owner)).id;
  });

  afterAll(async () => {
    await ctx.close();
  });

  const upload = (path: string, user: TestUser, content: Buffer) =>
    ctx.http.post(path).set('Authorization', user.auth).attach('file', content, 'notes.txt');

  describe('uploads are refused before a byte is stored', () => {
    const taskFiles = () => `/tasks/${taskId}/attachments`;
    const submissionFiles = (id = taskId) => `/tasks/${id}/submissions/me/attachments`;

    it.each([
      ['MEMBER', 'oversize', 'member', OVERSIZE],
      ['MEMBER', 'small', 'member', SMALL],
      ['non-member', 'oversize', 'outsider', OVERSIZE],
      ['non-member', 'small', 'outsider', SMALL],
    ] as const)(
      'task attachment by a %s (%s file): 403, nothing stored',
      async (_role, _size, who, content) => {
        const res = await upload(taskFiles(), roles[who], content);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(apiError('FORBIDDEN'));
        expect(storedFileKeys(ctx)).toEqual([]);
      },
    );

    it('submission attachment by a non-member: 403, nothing stored', async () => {
      const res = await upload(submissionFiles(), roles.outsider, OVERSIZE);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(apiError('FORBIDDEN'));
      expect(storedFileKeys(ctx)).toEqual([]);
    });

    it('a task the caller cannot see: 404 before the upload (unknown task, draft for a MEMBER)', async () => {
      for (const [path, user] of [
        [`/tasks/${UNKNOWN_ID}/attachments`, roles.owner],
        [submissionFiles(UNKNOWN_ID), roles.member],
        [submissionFiles(draftId), roles.member],
      ] as const) {
        const res = await upload(path, user, OVERSIZE);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(apiError('NOT_FOUND'));
      }
      expect(storedFileKeys(ctx)).toEqual([]);
    });

    it('no token: 401; malformed task id: 400', async () => {
      const anonymous = await ctx.http.post(taskFiles()).attach('file', OVERSIZE, 'notes.txt');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(apiError('UNAUTHORIZED'));
      const malformed = await upload('/tasks/not-a-uuid/attachments', roles.owner, SMALL);
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual(apiError('VALIDATION_ERROR'));
      expect(storedFileKeys(ctx)).toEqual([]);
    });

    it('a text field beside the file is an unknown body field: 400, nothing stored', async () => {
      const before = ctx.http
        .post(taskFiles())
        .set('Authorization', roles.admin.auth)
        .field('note', 'x')
        .attach('file', SMALL, 'notes.txt');
      const after = ctx.http
        .post(submissionFiles())
        .set('Authorization', roles.member.auth)
        .attach('file', SMALL, 'notes.txt')
        .field('note', 'x');
      for (const res of [await before, await after]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      }
      expect(storedFileKeys(ctx)).toEqual([]);
    });

    it('callers who may upload still get 413 for an oversize file and 201 otherwise', async () => {
      const tooLarge = await upload(taskFiles(), roles.admin, OVERSIZE);
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body).toEqual(apiError('PAYLOAD_TOO_LARGE'));
      const tooLargeSubmission = await upload(submissionFiles(), roles.member, OVERSIZE);
      expect(tooLargeSubmission.status).toBe(413);
      expect(storedFileKeys(ctx)).toEqual([]);

      const taskFile = await upload(taskFiles(), roles.admin, SMALL);
      expect(taskFile.status).toBe(201);
      const submissionFile = await upload(submissionFiles(), roles.member, SMALL);
      expect(submissionFile.status).toBe(201);
      expect(storedFileKeys(ctx).sort()).toEqual([taskFile.body.fileKey, submissionFile.body.fileKey].sort());
    });
  });

  describe('role checks come before body checks', () => {
    it('grading with an empty body: 403 for a MEMBER and a non-member, 400 for an ADMIN', async () => {
      const submission = await ctx.http
        .put(`/tasks/${taskId}/submissions/me`)
        .set('Authorization', roles.member.auth)
        .send({ content: 'answer' })
        .expect(200);
      const grade = `/tasks/${taskId}/submissions/${submission.body.id}/grade`;
      for (const user of [roles.member, roles.outsider]) {
        const res = await ctx.http.patch(grade).set('Authorization', user.auth).send({});
        expect(res.status).toBe(403);
        expect(res.body).toEqual(apiError('FORBIDDEN'));
      }
      const res = await ctx.http.patch(grade).set('Authorization', roles.admin.auth).send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    // Task routes with a body: access (403 non-member or MEMBER where OWNER/ADMIN is required, 404 a task
    // the caller cannot see) is answered before the body is validated.
    const taskRoutesWithBody: { route: string; method: 'patch' | 'post'; path: string; invalid: object }[] = [
      { route: 'PATCH /tasks/:taskId', method: 'patch', path: '', invalid: { title: 5 } },
      { route: 'POST /tasks/:taskId/publish', method: 'post', path: '/publish', invalid: { title: 5 } },
      { route: 'PATCH /tasks/:taskId/state', method: 'patch', path: '/state', invalid: { tags: 'x' } },
      { route: 'POST /tasks/:taskId/parse', method: 'post', path: '/parse', invalid: { text: 5 } },
    ];
    const send = (method: 'patch' | 'post', path: string, user: TestUser, body: object) =>
      ctx.http[method](path).set('Authorization', user.auth).send(body);

    it.each(taskRoutesWithBody)(
      '$route with an invalid body: 403/404 before 400',
      async ({ method, path, invalid }) => {
        const expectations: [TestUser, string, number][] = [
          [roles.outsider, taskId, 403],
          [roles.outsider, draftId, 403],
          [roles.member, draftId, 404],
          [roles.admin, UNKNOWN_ID, 404],
          [roles.admin, draftId, 400],
        ];
        if (path !== '/state') expectations.push([roles.member, taskId, 403]);
        for (const [user, id, status] of expectations) {
          const res = await send(method, `/tasks/${id}${path}`, user, invalid);
          expect({ user: user.id, id, status: res.status, body: res.body }).toEqual({
            user: user.id,
            id,
            status,
            body: apiError({ 400: 'VALIDATION_ERROR', 403: 'FORBIDDEN', 404: 'NOT_FOUND' }[status]!),
          });
        }
        const malformed = await send(method, `/tasks/not-a-uuid${path}`, roles.outsider, invalid);
        expect(malformed.status).toBe(400);
      },
    );
  });

  describe('request timestamps', () => {
    it('a day the month does not have is 400, not rolled over into the next month', async () => {
      for (const dueAt of ['2030-02-30T12:00:00Z', '2030-04-31T12:00:00+08:00']) {
        const res = await ctx.http
          .post(`/classes/${roles.classId}/tasks`)
          .set('Authorization', roles.owner.auth)
          .send({ title: 'Impossible date', dueAt });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      }
      const leapDay = await ctx.http
        .patch(`/tasks/${taskId}`)
        .set('Authorization', roles.owner.auth)
        .send({ dueAt: '2028-02-29T12:00:00Z' })
        .expect(200);
      expect(leapDay.body.dueAt).toBe('2028-02-29T12:00:00.000Z');
    });

    it('an instant outside the years 0001 to 9999 (UTC) is 400: the answer could not be written as YYYY-…Z', async () => {
      for (const dueAt of [
        '0000-06-01T00:00:00Z',
        '0001-01-01T00:00:00+01:00',
        '9999-12-31T23:00:00-05:00',
      ]) {
        const res = await ctx.http
          .post(`/classes/${roles.classId}/tasks`)
          .set('Authorization', roles.owner.auth)
          .send({ title: 'Out of range', dueAt });
        expect({ dueAt, status: res.status, body: res.body }).toEqual({
          dueAt,
          status: 400,
          body: apiError('VALIDATION_ERROR'),
        });
      }
      for (const [startAt, answered] of [
        ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
        ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
      ]) {
        const res = await ctx.http
          .patch(`/tasks/${draftId}`)
          .set('Authorization', roles.owner.auth)
          .send({ startAt, dueAt: null })
          .expect(200);
        expect(res.body.startAt).toBe(answered);
      }
    });
  });

  describe('null where the specification takes no null', () => {
    it('PUT notification-prefs with isEnabled null: 400, not 500', async () => {
      const res = await ctx.http
        .put('/users/me/notification-prefs')
        .set('Authorization', roles.member.auth)
        .send({ channel: 'EMAIL', address: 'member@example.com', isEnabled: null });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      const absent = await ctx.http
        .put('/users/me/notification-prefs')
        .set('Authorization', roles.member.auth)
        .send({ channel: 'EMAIL', address: 'member@example.com' })
        .expect(200);
      expect(absent.body).toEqual({
        id: expect.any(String),
        channel: 'EMAIL',
        address: 'member@example.com',
        isEnabled: true,
      });
    });

    it('draft parse with text null: 400, and the draft keeps its sourceText', async () => {
      const draft = await createDraft(ctx, roles.classId, roles.owner, {
        sourceText: 'Essay due 2030-05-01',
      });
      const res = await ctx.http
        .post(`/tasks/${draft.id}/parse`)
        .set('Authorization', roles.owner.auth)
        .send({ text: null });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      const after = await ctx.http
        .get(`/tasks/${draft.id}`)
        .set('Authorization', roles.owner.auth)
        .expect(200);
      expect(after.body.sourceText).toBe('Essay due 2030-05-01');
      const omitted = await ctx.http
        .post(`/tasks/${draft.id}/parse`)
        .set('Authorization', roles.owner.auth)
        .send({})
        .expect(200);
      expect(omitted.body.timeOptions[0].dueAt).toMatch(/^2030-05-01T/);
    });
  });

  describe('text PostgreSQL cannot store', () => {
    it('a NUL character in a body, query or path is 400 VALIDATION_ERROR, not 500', async () => {
      const answers = [
        await ctx.http.post('/classes').set('Authorization', roles.owner.auth).send({ name: 'a\u0000b' }),
        await ctx.http
          .put(`/tasks/${taskId}/submissions/me`)
          .set('Authorization', roles.member.auth)
          .send({ content: 'answer\u0000' }),
        await ctx.http.get('/schools?q=%00'),
        await ctx.http.get('/files/abc%00def').set('Authorization', roles.owner.auth),
      ];
      for (const res of answers) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      }
    });
  });

  describe('OpenAPI document', () => {
    interface Operation {
      requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
      responses: Record<
        string,
        { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }
      >;
      security?: unknown[];
      parameters?: { name: string; in: string; schema: unknown }[];
    }
    let paths: Record<string, Record<string, Operation>>;

    beforeAll(async () => {
      paths = (await ctx.http.get('/openapi.json').expect(200)).body.paths;
    });

    /** Every endpoint the specification names: method, path, success status, request body, no token needed. */
    const ENDPOINTS: [string, string, number, 'body' | '', 'public' | ''][] = [
      ['post', '/auth/register', 200, 'body', 'public'],
      ['post', '/auth/register/complete', 201, 'body', 'public'],
      ['post', '/auth/login', 200, 'body', 'public'],
      ['get', '/auth/verify-token', 200, '', 'public'],
      ['post', '/auth/forgot-password', 200, 'body', 'public'],
      ['post', '/auth/reset-password', 200, 'body', 'public'],
      ['get', '/schools', 200, '', 'public'],
      ['get', '/health', 200, '', 'public'],
      ['get', '/health/live', 200, '', 'public'],
      ['get', '/users/me', 200, '', ''],
      ['patch', '/users/me', 200, 'body', ''],
      ['patch', '/users/me/password', 200, 'body', ''],
      ['post', '/users/me/email/change', 200, 'body', ''],
      ['post', '/users/me/email/confirm', 200, 'body', ''],
      ['get', '/classes', 200, '', ''],
      ['post', '/classes', 201, 'body', ''],
      ['post', '/classes/join', 200, 'body', ''],
      ['get', '/classes/{classId}', 200, '', ''],
      ['patch', '/classes/{classId}', 200, 'body', ''],
      ['delete', '/classes/{classId}', 204, '', ''],
      ['get', '/classes/{classId}/members', 200, '', ''],
      ['patch', '/classes/{classId}/members/{userId}', 200, 'body', ''],
      ['delete', '/classes/{classId}/members/{userId}', 204, '', ''],
      ['post', '/classes/{classId}/transfer', 200, 'body', ''],
      ['post', '/classes/{classId}/invite-code', 200, '', ''],
      ['get', '/classes/{classId}/tasks', 200, '', ''],
      ['post', '/classes/{classId}/tasks', 201, 'body', ''],
      ['post', '/classes/{classId}/tasks/drafts', 201, 'body', ''],
      ['get', '/classes/{classId}/tasks/drafts/mine', 200, '', ''],
      ['get', '/tasks/mine', 200, '', ''],
      ['get', '/tasks/{taskId}', 200, '', ''],
      ['patch', '/tasks/{taskId}', 200, 'body', ''],
      ['delete', '/tasks/{taskId}', 204, '', ''],
      ['post', '/tasks/{taskId}/publish', 200, 'body', ''],
      ['post', '/tasks/{taskId}/view', 204, '', ''],
      ['patch', '/tasks/{taskId}/state', 200, 'body', ''],
      ['post', '/tasks/{taskId}/attachments', 201, 'body', ''],
      ['delete', '/tasks/{taskId}/attachments/{attachmentId}', 204, '', ''],
      ['post', '/tasks/parse', 200, 'body', ''],
      ['post', '/tasks/{taskId}/parse', 200, 'body', ''],
      ['get', '/tasks/{taskId}/draft-markdown', 200, '', ''],
      ['get', '/files/{fileKey}', 200, '', ''],
      ['get', '/files/{fileKey}/url', 200, '', ''],
      ['get', '/files/{fileKey}/content', 200, '', 'public'],
      ['get', '/tasks/{taskId}/comments', 200, '', ''],
      ['post', '/tasks/{taskId}/comments', 201, 'body', ''],
      ['delete', '/tasks/{taskId}/comments/{commentId}', 204, '', ''],
      ['get', '/tasks/{taskId}/submissions', 200, '', ''],
      ['get', '/tasks/{taskId}/submissions/me', 200, '', ''],
      ['put', '/tasks/{taskId}/submissions/me', 200, 'body', ''],
      ['post', '/tasks/{taskId}/submissions/me/attachments', 201, 'body', ''],
      ['delete', '/tasks/{taskId}/submissions/me/attachments/{attachmentId}', 204, '', ''],
      ['get', '/tasks/{taskId}/submissions/export', 200, '', ''],
      ['get', '/tasks/{taskId}/submissions/{submissionId}', 200, '', ''],
      ['patch', '/tasks/{taskId}/submissions/{submissionId}/grade', 200, 'body', ''],
      ['get', '/users/me/notifications', 200, '', ''],
      ['get', '/users/me/notifications/unread-count', 200, '', ''],
      ['patch', '/users/me/notifications/{id}/read', 200, '', ''],
      ['post', '/users/me/notifications/read-all', 200, '', ''],
      ['get', '/users/me/notification-prefs', 200, '', ''],
      ['put', '/users/me/notification-prefs', 200, 'body', ''],
    ];

    it.each(ENDPOINTS)('%s %s: %d with its schema', (method, path, status, body, open) => {
      const operation = paths[path]?.[method];
      expect(operation).toBeDefined();
      const success = operation.responses[String(status)];
      expect(success).toBeDefined();
      if (status === 204) expect(success.content).toBeUndefined();
      else expect(Object.values(success.content ?? {})[0]?.schema).toBeDefined();
      if (body) expect(Object.values(operation.requestBody?.content ?? {})[0]?.schema).toBeDefined();
      if (open) {
        expect(operation.security).toEqual([]);
      } else {
        expect(operation.security).toEqual([{ bearer: [] }]);
        expect(operation.responses['401']).toBeDefined();
      }
    });

    it('every error response has the {error, code} body; routes with an id or a body document 400', () => {
      for (const [path, operations] of Object.entries(paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const [status, response] of Object.entries(operation.responses)) {
            if (Number(status) < 400) continue;
            expect([method, path, status, response.content?.['application/json']?.schema]).toEqual([
              method,
              path,
              status,
              { $ref: '#/components/schemas/ErrorResponse' },
            ]);
          }
          const validated = operation.requestBody !== undefined || /\{(?!fileKey|token)\w+\}/.test(path);
          if (validated)
            expect([method, path, Object.keys(operation.responses)]).toContainEqual(
              expect.arrayContaining(['400']),
            );
        }
      }
    });

    it('path ids are documented as UUIDs (a malformed one is 400), file keys and feed tokens as plain strings, channels as their enum', () => {
      const schemaOf = (name: string) => {
        // A malformed file key or calendar feed token names nothing: 404, not 400.
        if (name === 'fileKey' || name === 'token') return { type: 'string' };
        if (name === 'channel') return { $ref: '#/components/schemas/NotificationChannel' };
        return { type: 'string', format: 'uuid' };
      };
      for (const [path, operations] of Object.entries(paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const parameter of operation.parameters ?? []) {
            if (parameter.in !== 'path') continue;
            expect([method, path, parameter.name, parameter.schema]).toEqual([
              method,
              path,
              parameter.name,
              schemaOf(parameter.name),
            ]);
          }
        }
      }
    });

    it('every JSON request body documents 413 PAYLOAD_TOO_LARGE (bodies over 1 MiB)', () => {
      for (const [path, operations] of Object.entries(paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          if (!operation.requestBody?.content['application/json']) continue;
          expect([method, path, operation.responses['413']?.content?.['application/json']?.schema]).toEqual([
            method,
            path,
            { $ref: '#/components/schemas/ErrorResponse' },
          ]);
        }
      }
    });

    it('every route documents 408 REQUEST_TIMEOUT and 503 SERVICE_UNAVAILABLE with the error body', () => {
      for (const [path, operations] of Object.entries(paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const status of ['408', '503']) {
            expect([
              method,
              path,
              status,
              operation.responses[status]?.content?.['application/json']?.schema,
            ]).toEqual([method, path, status, { $ref: '#/components/schemas/ErrorResponse' }]);
          }
        }
      }
    });

    it('documents Idempotency-Key on every authenticated write, ETag reads and If-Match writes', () => {
      const headerNames = (operation: Operation) =>
        (operation.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      for (const [path, operations] of Object.entries(paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          const keyed = ['post', 'put', 'patch'].includes(method) && operation.security?.length !== 0;
          expect([method, path, headerNames(operation).includes('Idempotency-Key')]).toEqual([
            method,
            path,
            keyed,
          ]);
          if (!keyed) continue;
          expect([method, path, Object.keys(operation.responses)]).toEqual([
            method,
            path,
            expect.arrayContaining(['409', '422']),
          ]);
          const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1];
          expect(success.headers).toHaveProperty('Idempotent-Replayed');
        }
      }
      const tagged = [
        ['get', '/tasks/{taskId}'],
        ['get', '/classes/{classId}'],
        ['get', '/tasks/{taskId}/submissions/me'],
        ['get', '/classes/{classId}/tasks'],
        ['get', '/tasks/mine'],
        ['get', '/users/me/notifications'],
      ];
      for (const [method, path] of tagged) {
        const operation = paths[path][method];
        expect([path, headerNames(operation), operation.responses['304']]).toEqual([
          path,
          expect.arrayContaining(['If-None-Match']),
          expect.anything(),
        ]);
        expect(operation.responses['200'].headers).toHaveProperty('ETag');
      }
      for (const [method, path] of [
        ['patch', '/tasks/{taskId}'],
        ['patch', '/classes/{classId}'],
        ['put', '/tasks/{taskId}/submissions/me'],
      ]) {
        const operation = paths[path][method];
        expect([path, headerNames(operation), operation.responses['412']?.content]).toEqual([
          path,
          expect.arrayContaining(['If-Match', 'Idempotency-Key']),
          { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
        ]);
      }
    });

    it('/health documents the body it answers', async () => {
      const health = paths['/health'].get;
      const { body } = await ctx.http.get('/health').expect(200);
      expect(body).toEqual({ status: 'ok', storage: 'ok' });
      expect(health.responses['200'].content?.['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ReadinessResponse',
      });
      expect(health.responses['503'].content?.['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ErrorResponse',
      });
    });

    it.each(['/tasks/{taskId}/attachments', '/tasks/{taskId}/submissions/me/attachments'])(
      'upload %s: multipart body with a binary file, 201 schema, 403 and 413',
      (path) => {
        const upload = paths[path].post;
        expect(upload.requestBody?.content['multipart/form-data'].schema).toEqual({
          type: 'object',
          required: ['file'],
          properties: { file: { type: 'string', format: 'binary' } },
        });
        expect(upload.responses['201'].content?.['application/json'].schema).toEqual({
          $ref: expect.stringMatching(/AttachmentResponse$/),
        });
        expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['403', '413']));
      },
    );
  });
});
