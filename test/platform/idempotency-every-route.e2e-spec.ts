import { randomBytes } from 'node:crypto';
import { isWrite, keyedWork } from '../../src/database/keyed-writes';
import { Transactions, Tx } from '../../src/database/transactions';
import { SmtpCapture } from '../fakes/smtp-server';
import { MAIL_LINK, tokenFromMail, uniqueEmail, useAppWithMailCapture } from '../utils/accounts';
import { apiError } from '../utils/expect';
import { attachQueryCounter, QueryCounter } from '../utils/query-counter';
import { choose, putRubric } from '../utils/rubrics';
import { putSubmission } from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, createDraft, createTask, FUTURE } from '../utils/tasks';
import { TestApp } from '../utils/test-app';
import { createUser, TEST_PASSWORD, TestUser } from '../utils/users';

/** A keyed request of one route, on a fixture of its own, and what it changed (read after each attempt). */
interface KeyedCall {
  user: TestUser;
  /** The path with its parameters filled in. */
  path: string;
  body?: object;
  /** An upload: the multipart file part `file`. */
  upload?: boolean;
  /** What the request changed, read from the database: equal after the first attempt and after the retry. */
  effect?: () => Promise<unknown>;
  /**
   * The write takes the caller's right to the route away (an ownership transfer): the retry is refused by
   * the access guard, which runs before the key is looked up, instead of being replayed.
   */
  retryForbidden?: true;
}

type Prepare = (ctx: TestApp) => Promise<KeyedCall>;

const firstRow = async (ctx: TestApp, sql: string, params: unknown[]): Promise<Record<string, unknown>> =>
  (await ctx.db.query<Record<string, unknown>[]>(sql, params))[0];

const rowsOf = async (ctx: TestApp, sql: string, params: unknown[]): Promise<unknown[]> =>
  ctx.db.query<unknown[]>(sql, params);

const count = async (ctx: TestApp, sql: string, params: unknown[]): Promise<number> =>
  Number((await firstRow(ctx, sql, params)).n);

/** A class with a published task (due before FUTURE), and the member's graded submission of it. */
async function gradedTask(ctx: TestApp): Promise<ClassWithRoles & { taskId: string; submissionId: string }> {
  const cls = await createClassWithRoles(ctx);
  const taskId = (await createTask(ctx, cls.classId, cls.owner, { dueAt: '2098-01-01T00:00:00.000Z' })).id;
  const submissionId = (await putSubmission(ctx, taskId, cls.member, 'my answer')).id;
  await ctx.http
    .patch(`/tasks/${taskId}/submissions/${submissionId}/grade`)
    .set('Authorization', cls.owner.auth)
    .send({ score: 5 })
    .expect(200);
  return { ...cls, taskId, submissionId };
}

async function withTask(ctx: TestApp): Promise<ClassWithRoles & { taskId: string }> {
  const cls = await createClassWithRoles(ctx);
  return { ...cls, taskId: (await createTask(ctx, cls.classId, cls.owner)).id };
}

/** A member with an unread notification of a task; its id. */
async function withNotification(ctx: TestApp): Promise<{ member: TestUser; notificationId: string }> {
  const { member, classId, taskId } = await withTask(ctx);
  // The task's publication may have notified the member already (one notification per task and user).
  await ctx.db.query(
    `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, title, content, status)
     VALUES ($1, 'TASK_PUBLISHED', $2, $3, 'Task', 'Class', 'New task', 'Task', 'SENT')
     ON CONFLICT DO NOTHING`,
    [member.id, taskId, classId],
  );
  const { id } = await firstRow(
    ctx,
    `SELECT id FROM notifications WHERE user_id = $1 AND task_id = $2 AND type = 'TASK_PUBLISHED'`,
    [member.id, taskId],
  );
  return { member, notificationId: String(id) };
}

/**
 * Every route that takes `Idempotency-Key`, as OpenAPI names it, with a request that succeeds on a fresh
 * fixture. A new keyed route fails the test below until it is added here.
 */
function keyedRoutes(smtp: () => SmtpCapture): Record<string, Prepare> {
  return {
    'post /classes': async (ctx) => {
      const user = await createUser(ctx);
      const name = `Retried ${randomBytes(4).toString('hex')}`;
      return {
        user,
        path: '/classes',
        body: { name },
        effect: () => count(ctx, `SELECT count(*) AS n FROM classes WHERE name = $1`, [name]),
      };
    },
    'patch /classes/{classId}': async (ctx) => {
      const { owner, classId } = await createClassWithRoles(ctx);
      return { user: owner, path: `/classes/${classId}`, body: { name: 'Renamed' } };
    },
    'post /classes/{classId}/invite-code': async (ctx) => {
      const { owner, classId } = await createClassWithRoles(ctx);
      return {
        user: owner,
        path: `/classes/${classId}/invite-code`,
        effect: () => firstRow(ctx, `SELECT invite_code FROM classes WHERE id = $1`, [classId]),
      };
    },
    'patch /classes/{classId}/members/{userId}': async (ctx) => {
      const { owner, member, classId } = await createClassWithRoles(ctx);
      return { user: owner, path: `/classes/${classId}/members/${member.id}`, body: { role: 'ADMIN' } };
    },
    'post /classes/{classId}/tasks': async (ctx) => {
      const { owner, classId } = await createClassWithRoles(ctx);
      return {
        user: owner,
        path: `/classes/${classId}/tasks`,
        body: { title: 'Once' },
        effect: () => count(ctx, `SELECT count(*) AS n FROM tasks WHERE class_id = $1`, [classId]),
      };
    },
    'post /classes/{classId}/tasks/drafts': async (ctx) => {
      const { owner, classId } = await createClassWithRoles(ctx);
      return {
        user: owner,
        path: `/classes/${classId}/tasks/drafts`,
        body: { title: 'Draft once' },
        effect: () => count(ctx, `SELECT count(*) AS n FROM tasks WHERE class_id = $1`, [classId]),
      };
    },
    'post /classes/{classId}/transfer': async (ctx) => {
      const { owner, admin, classId } = await createClassWithRoles(ctx);
      return {
        user: owner,
        path: `/classes/${classId}/transfer`,
        body: { newOwnerId: admin.id },
        retryForbidden: true,
        effect: () => firstRow(ctx, `SELECT owner_id FROM classes WHERE id = $1`, [classId]),
      };
    },
    'post /classes/join': async (ctx) => {
      const { classId, outsider } = await createClassWithRoles(ctx);
      const { invite_code } = await firstRow(ctx, `SELECT invite_code FROM classes WHERE id = $1`, [classId]);
      return { user: outsider, path: '/classes/join', body: { inviteCode: invite_code } };
    },
    'patch /tasks/{taskId}': async (ctx) => {
      const { owner, taskId } = await withTask(ctx);
      return { user: owner, path: `/tasks/${taskId}`, body: { title: 'Renamed' } };
    },
    'post /tasks/{taskId}/attachments': async (ctx) => {
      const { owner, taskId } = await withTask(ctx);
      return {
        user: owner,
        path: `/tasks/${taskId}/attachments`,
        upload: true,
        effect: () => count(ctx, `SELECT count(*) AS n FROM task_attachments WHERE task_id = $1`, [taskId]),
      };
    },
    'post /tasks/{taskId}/comments': async (ctx) => {
      const { member, taskId } = await withTask(ctx);
      return {
        user: member,
        path: `/tasks/${taskId}/comments`,
        body: { content: 'Once only' },
        effect: () => count(ctx, `SELECT count(*) AS n FROM task_comments WHERE task_id = $1`, [taskId]),
      };
    },
    'put /tasks/{taskId}/extensions/{userId}': async (ctx) => {
      const { owner, member, taskId } = await gradedTask(ctx);
      return { user: owner, path: `/tasks/${taskId}/extensions/${member.id}`, body: { dueAt: FUTURE } };
    },
    'post /tasks/{taskId}/grades/release': async (ctx) => {
      const { owner, taskId } = await gradedTask(ctx);
      return { user: owner, path: `/tasks/${taskId}/grades/release`, body: {} };
    },
    'post /tasks/{taskId}/parse': async (ctx) => {
      const { owner, classId } = await createClassWithRoles(ctx);
      const draft = await createDraft(ctx, classId, owner, { title: 'To parse' });
      return { user: owner, path: `/tasks/${draft.id}/parse`, body: { text: 'Essay due Friday 5pm' } };
    },
    'post /tasks/{taskId}/publish': async (ctx) => {
      const { owner, classId } = await createClassWithRoles(ctx);
      const draft = await createDraft(ctx, classId, owner, { title: 'To publish' });
      return { user: owner, path: `/tasks/${draft.id}/publish` };
    },
    'patch /tasks/{taskId}/state': async (ctx) => {
      const { member, taskId } = await withTask(ctx);
      return {
        user: member,
        path: `/tasks/${taskId}/state`,
        body: { tags: ['once'] },
        effect: () =>
          firstRow(ctx, `SELECT tags FROM task_user_states WHERE task_id = $1 AND user_id = $2`, [
            taskId,
            member.id,
          ]),
      };
    },
    'patch /tasks/{taskId}/submissions/{submissionId}/exemplary': async (ctx) => {
      const { owner, taskId, submissionId } = await gradedTask(ctx);
      // No body: the flag is toggled, so a second run would toggle it back.
      return {
        user: owner,
        path: `/tasks/${taskId}/submissions/${submissionId}/exemplary`,
        effect: () => firstRow(ctx, `SELECT is_exemplary FROM submissions WHERE id = $1`, [submissionId]),
      };
    },
    'patch /tasks/{taskId}/submissions/{submissionId}/grade': async (ctx) => {
      const { owner, taskId, submissionId } = await gradedTask(ctx);
      // Graded with a rubric: the assessment's rows are written with the grade.
      const rubric = await putRubric(ctx, taskId, owner);
      return {
        user: owner,
        path: `/tasks/${taskId}/submissions/${submissionId}/grade`,
        body: { feedback: 'Good', rubric: [choose(rubric, 'Argument', 'Strong', 'Clear')] },
        effect: () =>
          rowsOf(
            ctx,
            `SELECT s.score, a.criterion_id, a.level_id, a.comment
               FROM submissions s LEFT JOIN rubric_assessments a ON a.submission_id = s.id
              WHERE s.id = $1 ORDER BY a.criterion_id`,
            [submissionId],
          ),
      };
    },
    'post /tasks/{taskId}/submissions/{submissionId}/return': async (ctx) => {
      const { owner, member, taskId, submissionId } = await gradedTask(ctx);
      return {
        user: owner,
        path: `/tasks/${taskId}/submissions/${submissionId}/return`,
        body: { feedback: 'Once more, please' },
        effect: async () => [
          await firstRow(ctx, `SELECT status, feedback FROM submissions WHERE id = $1`, [submissionId]),
          await count(
            ctx,
            `SELECT count(*) AS n FROM notifications WHERE user_id = $1 AND type = 'SUBMISSION_RETURNED'`,
            [member.id],
          ),
        ],
      };
    },
    'put /tasks/{taskId}/rubric': async (ctx) => {
      const { owner, taskId } = await withTask(ctx);
      return {
        user: owner,
        path: `/tasks/${taskId}/rubric`,
        body: { criteria: [{ title: 'Once', levels: [{ title: 'Done', points: 1 }] }] },
        effect: () =>
          count(
            ctx,
            `SELECT count(*) AS n FROM rubric_criteria c JOIN rubric_levels l ON l.criterion_id = c.id
              WHERE c.task_id = $1`,
            [taskId],
          ),
      };
    },
    'put /tasks/{taskId}/submissions/me': async (ctx) => {
      const { member, taskId } = await withTask(ctx);
      return { user: member, path: `/tasks/${taskId}/submissions/me`, body: { content: 'Answer' } };
    },
    'post /tasks/{taskId}/submissions/me/attachments': async (ctx) => {
      const { member, taskId } = await withTask(ctx);
      return { user: member, path: `/tasks/${taskId}/submissions/me/attachments`, upload: true };
    },
    'post /tasks/{taskId}/view': async (ctx) => {
      const { member, taskId } = await withTask(ctx);
      return {
        user: member,
        path: `/tasks/${taskId}/view`,
        effect: () =>
          firstRow(ctx, `SELECT viewed_at FROM task_user_states WHERE task_id = $1 AND user_id = $2`, [
            taskId,
            member.id,
          ]),
      };
    },
    'post /tasks/parse': async (ctx) => ({
      user: await createUser(ctx),
      path: '/tasks/parse',
      body: { text: 'Essay due Friday 5pm' },
    }),
    'patch /users/me': async (ctx) => ({
      user: await createUser(ctx),
      path: '/users/me',
      body: { nickname: 'Once' },
    }),
    'put /users/me/calendar-feed': async (ctx) => ({
      user: await createUser(ctx),
      path: '/users/me/calendar-feed',
    }),
    'post /users/me/deliveries/{deliveryId}/redeliver': async (ctx) => {
      const user = await createUser(ctx);
      const { id } = await firstRow(
        ctx,
        `INSERT INTO notification_deliveries (user_id, type, channel, address, status, attempts, sent_at)
         VALUES ($1, 'TEST', 'EMAIL', $2, 'FAILED', 1, now()) RETURNING id`,
        [user.id, user.email],
      );
      return {
        user,
        path: `/users/me/deliveries/${String(id)}/redeliver`,
        effect: () =>
          count(ctx, `SELECT count(*) AS n FROM notification_deliveries WHERE user_id = $1`, [user.id]),
      };
    },
    'post /users/me/email/change': async (ctx) => ({
      user: await createUser(ctx),
      path: '/users/me/email/change',
      body: { email: uniqueEmail('changed') },
    }),
    'post /users/me/email/confirm': async (ctx) => {
      const user = await createUser(ctx);
      const email = uniqueEmail('confirmed');
      await ctx.http
        .post('/users/me/email/change')
        .set('Authorization', user.auth)
        .send({ email })
        .expect(200);
      const token = tokenFromMail(ctx, await smtp().waitFor(email), MAIL_LINK.emailChange);
      return { user, path: '/users/me/email/confirm', body: { token } };
    },
    'put /users/me/notification-prefs': async (ctx) => ({
      user: await createUser(ctx),
      path: '/users/me/notification-prefs',
      body: { channel: 'WEBHOOK', address: 'http://127.0.0.1:9/hook' },
    }),
    'post /users/me/notification-prefs/{channel}/test': async (ctx) => {
      const user = await createUser(ctx);
      await ctx.http
        .put('/users/me/notification-prefs')
        .set('Authorization', user.auth)
        .send({ channel: 'EMAIL', address: user.email })
        .expect(200);
      return {
        user,
        path: '/users/me/notification-prefs/EMAIL/test',
        effect: () =>
          count(ctx, `SELECT count(*) AS n FROM notification_deliveries WHERE user_id = $1`, [user.id]),
      };
    },
    'patch /users/me/notifications/{id}/read': async (ctx) => {
      const { member, notificationId } = await withNotification(ctx);
      return {
        user: member,
        path: `/users/me/notifications/${notificationId}/read`,
        effect: () => firstRow(ctx, `SELECT read_at FROM notifications WHERE id = $1`, [notificationId]),
      };
    },
    'put /users/me/notification-schedule': async (ctx) => {
      const user = await createUser(ctx);
      return {
        user,
        path: '/users/me/notification-schedule',
        body: { quietHours: { start: '22:00', end: '07:00' }, digest: 'DAILY', digestAt: '18:00' },
        effect: () =>
          firstRow(
            ctx,
            `SELECT quiet_start, digest, digest_at, digest_since FROM notification_schedules WHERE user_id = $1`,
            [user.id],
          ),
      };
    },
    'post /users/me/notifications/read-all': async (ctx) => {
      const { member } = await withNotification(ctx);
      return {
        user: member,
        path: '/users/me/notifications/read-all',
        effect: () => rowsOf(ctx, `SELECT read_at FROM notifications WHERE user_id = $1`, [member.id]),
      };
    },
    'post /users/me/notifications/stream-ticket': async (ctx) => ({
      user: await createUser(ctx),
      path: '/users/me/notifications/stream-ticket',
    }),
    'patch /users/me/password': async (ctx) => ({
      user: await createUser(ctx),
      path: '/users/me/password',
      body: { currentPassword: TEST_PASSWORD, newPassword: 'another long passphrase 42' },
    }),
  };
}

/** Names of answer fields that hold a credential, and texts that are one wherever they appear. */
const CREDENTIAL_FIELD = /token|ticket|secret|password|url/i;
const CREDENTIAL_TEXT = /whsec_|eyJ[\w-]{8,}\.[\w-]{8,}\.|\/calendar\/[\w-]{20,}/;

/** The credentials in a request and its answer: every string of a credential-named field, and its tail. */
function credentialsIn(value: unknown, field = ''): string[] {
  if (typeof value === 'string') {
    if (!CREDENTIAL_FIELD.test(field) && !CREDENTIAL_TEXT.test(value)) return [];
    // The secret part of a URL (a feed address's token) is its last path segment.
    const tail = /\/([\w-]{20,})(?:\.ics)?$/.exec(value)?.[1];
    return [value, ...(tail ? [tail] : [])];
  }
  if (Array.isArray(value)) return value.flatMap((item) => credentialsIn(item, field));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([name, item]) => credentialsIn(item, name));
  return [];
}

/**
 * Writes of a request other than its key's own bookkeeping and the rate limits' count of requests (a
 * throttle guard runs before the key is claimed, and counts a replay like any request).
 */
const writesOf = (statements: string[]): string[] =>
  statements.filter(
    (statement) => isWrite(statement) && !/\b(idempotency_keys|throttler_hits)\b/.test(statement),
  );

const newKey = (): string => `every-route-${randomBytes(8).toString('hex')}`;

describe('Idempotency-Key on every keyed route', () => {
  const { ctx, smtp } = useAppWithMailCapture();
  const routes = keyedRoutes(() => smtp);
  let counter: QueryCounter;
  let openApi: Record<string, Record<string, Record<string, unknown>>>;

  /** While set, each transaction of a keyed request fails right after its commit (the answer is then lost). */
  let failAfterCommit = false;
  let injected = 0;

  beforeAll(async () => {
    counter = attachQueryCounter(ctx);
    openApi = (await ctx.http.get('/openapi.json').expect(200)).body.paths;
    const run = Transactions.prototype.run;
    jest.spyOn(Transactions.prototype, 'run').mockImplementation(async function (
      this: Transactions,
      work: (tx: Tx) => Promise<unknown>,
    ) {
      const result = await run.call(this, work);
      if (failAfterCommit && keyedWork.getStore()) {
        injected += 1;
        throw new Error('A failure injected after the commit');
      }
      return result;
    });
  });
  afterAll(() => {
    counter.detach();
    jest.restoreAllMocks();
  });

  const send = (call: KeyedCall, key: string) => {
    const method = routeOf(call).split(' ')[0] as 'post' | 'put' | 'patch';
    const request = ctx.http[method](call.path)
      .set('Authorization', call.user.auth)
      .set('Idempotency-Key', key);
    return call.upload ? request.attach('file', Buffer.from('once'), 'once.txt') : request.send(call.body);
  };
  const routeOfCall = new WeakMap<KeyedCall, string>();
  const routeOf = (call: KeyedCall): string => routeOfCall.get(call)!;

  async function prepared(route: string): Promise<KeyedCall> {
    const call = await routes[route](ctx);
    routeOfCall.set(call, route);
    return call;
  }

  it('covers every route that takes the key, as OpenAPI lists them', () => {
    const keyed = Object.entries(openApi).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => {
          const idempotency = operation['x-idempotency-key'] as { answer: string } | undefined;
          return idempotency !== undefined && idempotency.answer !== 'none';
        })
        .map(([method]) => `${method} ${path}`),
    );
    expect(keyed.length).toBeGreaterThan(30);
    expect(Object.keys(routes).sort()).toEqual(keyed.sort());
  });

  it.each(Object.keys(keyedRoutes(() => smtp)))(
    '%s: a failure after the write commits, then the retry: nothing runs twice',
    async (route) => {
      const call = await prepared(route);
      const key = newKey();
      const withheld =
        (openApi[route.split(' ')[1]][route.split(' ')[0]]['x-idempotency-key'] as { answer: string })
          .answer === 'withheld';
      let first!: Awaited<ReturnType<typeof send>>;
      failAfterCommit = true;
      injected = 0;
      const firstWrites = writesOf(
        await counter.record(async () => {
          first = await send(call, key);
        }),
      ).length;
      failAfterCommit = false;
      const effect = await call.effect?.();
      if (firstWrites > 0) {
        // Whatever it wrote, it wrote in the transaction that marks the key.
        expect([first.status, first.body, injected]).toEqual([500, apiError('INTERNAL_ERROR'), 1]);
      } else {
        expect(first.status).toBeLessThan(300);
      }
      let retry!: Awaited<ReturnType<typeof send>>;
      const retryWrites = writesOf(
        await counter.record(async () => {
          retry = await send(call, key);
        }),
      );
      expect(retryWrites).toEqual([]);
      if (call.retryForbidden) {
        expect([retry.status, retry.body]).toEqual([403, apiError('FORBIDDEN')]);
      } else if (withheld) {
        expect([retry.status, retry.body]).toEqual([409, apiError('IDEMPOTENCY_ANSWER_NOT_KEPT')]);
      } else {
        expect([retry.status, retry.headers['idempotent-replayed'], retry.body]).toEqual([
          first.status,
          'true',
          first.body,
        ]);
      }
      expect(await call.effect?.()).toEqual(effect);
    },
  );

  it.each(Object.keys(keyedRoutes(() => smtp)))(
    '%s: keeps no credential of its answer (or request) in clear, and a replay still answers it',
    async (route) => {
      const call = await prepared(route);
      const key = newKey();
      const first = await send(call, key);
      expect(first.status).toBeLessThan(300);
      const credentials = [...credentialsIn(first.body), ...credentialsIn(call.body ?? {})];
      const kept = await rowsOf(ctx, `SELECT * FROM idempotency_keys WHERE user_id = $1 AND key = $2`, [
        call.user.id,
        key,
      ]);
      expect(kept).toHaveLength(1);
      const text = JSON.stringify(kept);
      expect(credentials.filter((credential) => text.includes(credential))).toEqual([]);
      expect(CREDENTIAL_TEXT.exec(text)?.[0]).toBeUndefined();
      const withheld =
        (openApi[route.split(' ')[1]][route.split(' ')[0]]['x-idempotency-key'] as { answer: string })
          .answer === 'withheld';
      if (!withheld && !call.retryForbidden) {
        const replay = await send(call, key);
        expect([replay.headers['idempotent-replayed'], replay.body]).toEqual(['true', first.body]);
      }
    },
  );

  it('answers the webhook secret again on a replay of PUT /users/me/notification-prefs, kept sealed', async () => {
    const call = await prepared('put /users/me/notification-prefs');
    const key = newKey();
    const first = await send(call, key);
    expect(first.body.secret).toMatch(/^whsec_/);
    const [{ body }] = (await rowsOf(
      ctx,
      `SELECT response_body AS body FROM idempotency_keys WHERE key = $1`,
      [key],
    )) as {
      body: string;
    }[];
    expect(body).toMatch(/^sealed\.v1\./);
    expect(body).not.toContain(first.body.secret.slice('whsec_'.length));
    const replay = await send(call, key);
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body]).toEqual([
      200,
      'true',
      first.body,
    ]);
    // Moved to another key's row, the sealed body does not open there: that key's repeat says so.
    const other = newKey();
    await send(call, other).expect(200);
    await ctx.db.query(`UPDATE idempotency_keys SET response_body = $1 WHERE key = $2`, [body, other]);
    expect((await send(call, other)).body).toEqual(apiError('IDEMPOTENCY_ANSWER_NOT_KEPT'));
  });

  it('keeps no working link of an account mail in the outbox: its text is sealed until sent', async () => {
    const user = await createUser(ctx);
    const email = uniqueEmail('sealed');
    await ctx.http.post('/users/me/email/change').set('Authorization', user.auth).send({ email }).expect(200);
    const queued = JSON.stringify(
      await rowsOf(ctx, `SELECT payload FROM notification_deliveries WHERE address = $1`, [email]),
    );
    const token = tokenFromMail(ctx, await smtp.waitFor(email), MAIL_LINK.emailChange);
    const kept = JSON.stringify(
      await rowsOf(ctx, `SELECT * FROM notification_deliveries WHERE address = $1`, [email]),
    );
    expect(queued).toMatch(/sealed\.v1\./);
    for (const text of [queued, kept]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(encodeURIComponent(token));
    }
    // The link in the mail works.
    await ctx.http
      .post('/users/me/email/confirm')
      .set('Authorization', user.auth)
      .send({ token })
      .expect(200);
  });
});
