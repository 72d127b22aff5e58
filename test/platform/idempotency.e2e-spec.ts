import { createHash, randomBytes } from 'node:crypto';
import stableStringify from 'safe-stable-stringify';
import { IdempotencyCleanupService } from '../../src/idempotency/idempotency-cleanup.service';
import { waitForLockWaiters } from '../utils/database';
import { sleep, waitFor } from '../utils/wait';
import { apiError } from '../utils/expect';
import { storedFileKeys } from '../utils/files';
import { createClassWithRoles, createTask } from '../utils/tasks';
import { useSharedInstances } from '../utils/notifications';
import { TestApp, useTestApp } from '../utils/test-app';
import { TestUser } from '../utils/users';

const newKey = (): string => `key-${randomBytes(8).toString('hex')}`;

const classCount = async (ctx: TestApp, owner: TestUser): Promise<number> =>
  (await ctx.db.query(`SELECT count(*)::int AS n FROM classes WHERE owner_id = $1`, [owner.id]))[0].n;

const keyRows = async (ctx: TestApp, user: TestUser): Promise<number> =>
  (await ctx.db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE user_id = $1`, [user.id]))[0].n;

/**
 * Holds the class row locked (as a concurrent class change does) while `during` runs; the request `during`
 * leaves waiting on the lock (its `pending`) is answered once the lock is gone.
 */
async function withClassLocked<T>(
  ctx: TestApp,
  classId: string,
  during: () => Promise<{ pending: Promise<T> }>,
): Promise<T> {
  const runner = ctx.db.createQueryRunner();
  await runner.startTransaction();
  let pending: Promise<T>;
  try {
    await runner.query(`SELECT 1 FROM classes WHERE id = $1 FOR UPDATE`, [classId]);
    ({ pending } = await during());
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
  return pending;
}

describe('Idempotency-Key: safe retries of authenticated writes', () => {
  const ctx = useTestApp();

  const postClass = (user: TestUser, key: string | undefined, body: object) => {
    const req = ctx.http.post('/classes').set('Authorization', user.auth);
    if (key !== undefined) req.set('Idempotency-Key', key);
    return req.send(body);
  };

  it('a repeat answers the first status and body with Idempotent-Replayed and changes nothing', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const before = await classCount(ctx, owner);
    const key = newKey();
    const first = await postClass(owner, key, { name: 'Physics' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await postClass(owner, key, { name: 'Physics' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.body).toEqual(first.body);
    expect(await classCount(ctx, owner)).toBe(before + 1);
  });

  it('keeps no digest of the body anyone could recompute: the fingerprint is keyed with a server secret', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const key = newKey();
    const body = { name: 'Fingerprinted' };
    expect((await postClass(owner, key, body)).status).toBe(201);
    const [{ fingerprint }] = await ctx.db.query(
      `SELECT request_fingerprint AS fingerprint FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
      [owner.id, key],
    );
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    for (const text of [JSON.stringify(body), stableStringify(body)])
      expect(fingerprint).not.toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('an answer that carries a credential is not kept: a repeat answers 409 IDEMPOTENCY_ANSWER_NOT_KEPT', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const requests = [
      () => ctx.http.put('/users/me/calendar-feed'),
      () => ctx.http.post('/users/me/notifications/stream-ticket'),
    ];
    for (const request of requests) {
      const key = newKey();
      const first = await request().set('Authorization', owner.auth).set('Idempotency-Key', key).send();
      expect(first.status).toBeLessThan(300);
      const [kept] = await ctx.db.query(
        `SELECT response_status AS status, response_body AS body FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
        [owner.id, key],
      );
      expect(kept).toEqual({ status: first.status, body: null });
      const repeat = await request().set('Authorization', owner.auth).set('Idempotency-Key', key).send();
      expect([repeat.status, repeat.body]).toEqual([409, apiError('IDEMPOTENCY_ANSWER_NOT_KEPT')]);
    }
  });

  it('every authenticated POST, PUT and PATCH takes the key (or says why not); three keep no answer', async () => {
    const { body } = await ctx.http.get('/openapi.json').expect(200);
    const writes = Object.entries(body.paths as Record<string, Record<string, Record<string, unknown>>>)
      .flatMap(([path, operations]) =>
        Object.entries(operations).map(([method, operation]) => ({ route: `${method} ${path}`, operation })),
      )
      .filter(({ route, operation }) => {
        const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
        return /^(post|put|patch) /.test(route) && !isPublic;
      });
    expect(writes.length).toBeGreaterThan(30);
    const declared = writes.map(({ route, operation }) => {
      const idempotency = operation['x-idempotency-key'] as { answer: string; because?: string } | undefined;
      const header = ((operation.parameters ?? []) as { name: string }[]).some(
        (parameter) => parameter.name === 'Idempotency-Key',
      );
      return { route, answer: idempotency?.answer, documented: header === (idempotency?.answer !== 'none') };
    });
    expect(declared.filter(({ answer, documented }) => answer === undefined || !documented)).toEqual([]);
    expect(declared.filter(({ answer }) => answer === 'withheld').map(({ route }) => route)).toEqual([
      'patch /users/me/password',
      'post /users/me/notifications/stream-ticket',
      'put /users/me/calendar-feed',
    ]);
  });

  it('the same JSON with its keys in another order is the same request', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const key = newKey();
    const first = await postClass(owner, key, { name: 'Order', color: '#112233' });
    const again = await postClass(owner, key, { color: '#112233', name: 'Order' });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
  });

  it('the key with another body, path or method answers 422 IDEMPOTENCY_KEY_REUSED and changes nothing', async () => {
    const { owner, classId } = await createClassWithRoles(ctx);
    const key = newKey();
    expect((await postClass(owner, key, { name: 'First' })).status).toBe(201);
    const before = await classCount(ctx, owner);
    const otherBody = await postClass(owner, key, { name: 'Second' });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body).toEqual(apiError('IDEMPOTENCY_KEY_REUSED'));
    const otherRoute = await ctx.http
      .patch(`/classes/${classId}`)
      .set('Authorization', owner.auth)
      .set('Idempotency-Key', key)
      .send({ name: 'First' });
    expect(otherRoute.status).toBe(422);
    expect(otherRoute.body).toEqual(apiError('IDEMPOTENCY_KEY_REUSED'));
    expect(await classCount(ctx, owner)).toBe(before);
    const cls = await ctx.http.get(`/classes/${classId}`).set('Authorization', owner.auth);
    expect(cls.body.name).not.toBe('First');
  });

  it('keys are per user: another user with the same key runs their own request', async () => {
    const { owner, admin } = await createClassWithRoles(ctx);
    const key = newKey();
    const mine = await postClass(owner, key, { name: 'Mine' });
    const theirs = await postClass(admin, key, { name: 'Theirs' });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('a key of 1 to 255 visible ASCII characters is accepted; anything else is 400 VALIDATION_ERROR', async () => {
    const { owner } = await createClassWithRoles(ctx);
    for (const key of ['k', '!'.repeat(255), '~abc-ABC_123/+=']) {
      expect((await postClass(owner, `${key}`, { name: 'Keyed' })).status).toBe(201);
    }
    const before = await classCount(ctx, owner);
    for (const key of ['', 'x'.repeat(256), 'with space', 'tab\tkey', 'ümlaut']) {
      const res = await postClass(owner, key, { name: 'Refused' });
      expect([key, res.status, res.body]).toEqual([key, 400, apiError('VALIDATION_ERROR')]);
    }
    expect(await classCount(ctx, owner)).toBe(before);
  });

  it('without the header nothing is stored, and GET and DELETE ignore the header', async () => {
    const { owner, classId } = await createClassWithRoles(ctx);
    const before = await keyRows(ctx, owner);
    expect((await postClass(owner, undefined, { name: 'Plain' })).status).toBe(201);
    const read = await ctx.http
      .get(`/classes/${classId}`)
      .set('Authorization', owner.auth)
      .set('Idempotency-Key', newKey());
    expect(read.status).toBe(200);
    expect(await keyRows(ctx, owner)).toBe(before);
  });

  it('a 4xx answer is kept and replayed like a success', async () => {
    const { owner, member, classId } = await createClassWithRoles(ctx);
    const key = newKey();
    const invalid = await postClass(owner, key, { name: '' });
    expect(invalid.status).toBe(400);
    const again = await postClass(owner, key, { name: '' });
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(invalid.body);

    // A MEMBER refused by the service's rules (403 from the route's access guard is not kept: no claim yet).
    const memberKey = newKey();
    const refused = await ctx.http
      .patch(`/classes/${classId}`)
      .set('Authorization', member.auth)
      .set('Idempotency-Key', memberKey)
      .send({ name: 'Nope' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(apiError('FORBIDDEN'));
  });

  it('a 5xx answer releases the key: a retry runs again', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const name = `Broken ${randomBytes(3).toString('hex')}`;
    await ctx.db.query(`
      CREATE FUNCTION fail_named_class() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.name = '${name}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER fail_named_class BEFORE INSERT ON classes FOR EACH ROW EXECUTE FUNCTION fail_named_class();
    `);
    const key = newKey();
    try {
      const failed = await postClass(owner, key, { name });
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual(apiError('INTERNAL_ERROR'));
      expect(await keyRows(ctx, owner)).toBe(0);
    } finally {
      await ctx.db.query(`DROP TRIGGER fail_named_class ON classes; DROP FUNCTION fail_named_class();`);
    }
    const retried = await postClass(owner, key, { name });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body.name).toBe(name);
  });

  it('a repeat while the first is in flight answers 409 CONFLICT; once it answered, the answer is replayed', async () => {
    const { owner, classId } = await createClassWithRoles(ctx);
    const key = newKey();
    const patch = (name: string) =>
      ctx.http
        .patch(`/classes/${classId}`)
        .set('Authorization', owner.auth)
        .set('Idempotency-Key', key)
        .send({ name });
    const first = await withClassLocked(ctx, classId, async () => {
      const pending = patch('Renamed').then((res) => res);
      await waitForLockWaiters(ctx.db, 1);
      const repeat = await patch('Renamed');
      expect(repeat.status).toBe(409);
      expect(repeat.body).toEqual(apiError('CONFLICT'));
      const other = await patch('Other name');
      expect(other.status).toBe(422);
      return { pending };
    });
    expect(first.status).toBe(200);
    const replay = await patch('Renamed');
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('a client that gives up while its request waits: the retry is 409 until the first commits, then its answer; one write', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const [{ id: schoolId }] = await ctx.db.query(`INSERT INTO schools (name) VALUES ($1) RETURNING id`, [
      `School ${randomBytes(3).toString('hex')}`,
    ]);
    const before = await classCount(ctx, owner);
    const key = newKey();
    const body = { name: 'Given up', schoolId };
    // The class insert waits on the school row; the client stops waiting first and drops its connection.
    const runner = ctx.db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT 1 FROM schools WHERE id = $1 FOR UPDATE`, [schoolId]);
      const givenUp = postClass(owner, key, body)
        .timeout(300)
        .then(
          () => 'answered',
          (error: Error) => error.message,
        );
      await waitForLockWaiters(ctx.db, 1);
      expect(await givenUp).toMatch(/timeout/i);
      await sleep(200);
      // Still running on the server: a retry must not run the request a second time.
      const retry = await postClass(owner, key, body).timeout(3_000);
      expect([retry.status, retry.body]).toEqual([409, apiError('CONFLICT')]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    await waitFor('the first request to commit', async () => (await classCount(ctx, owner)) === before + 1);
    const replay = await waitFor('the first answer', async () => {
      const res = await postClass(owner, key, body);
      return res.status === 409 ? null : res;
    });
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body.name]).toEqual([
      201,
      'true',
      'Given up',
    ]);
    expect(await classCount(ctx, owner)).toBe(before + 1);
  });

  it('an upload is replayed without storing the file again; another file with the key is 422', async () => {
    const { owner, classId } = await createClassWithRoles(ctx);
    const task = await createTask(ctx, classId, owner);
    const key = newKey();
    const upload = (content: string, name = 'notes.txt') =>
      ctx.http
        .post(`/tasks/${task.id}/attachments`)
        .set('Authorization', owner.auth)
        .set('Idempotency-Key', key)
        .attach('file', Buffer.from(content), { filename: name, contentType: 'text/plain' });
    const first = await upload('the notes');
    expect(first.status).toBe(201);
    const files = storedFileKeys(ctx).length;
    const again = await upload('the notes');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(storedFileKeys(ctx)).toHaveLength(files);
    const detail = await ctx.http.get(`/tasks/${task.id}`).set('Authorization', owner.auth);
    expect(detail.body.attachments).toHaveLength(1);

    for (const other of [upload('other notes'), upload('the notes', 'renamed.txt')]) {
      const res = await other;
      expect(res.status).toBe(422);
      expect(res.body).toEqual(apiError('IDEMPOTENCY_KEY_REUSED'));
    }
    expect(storedFileKeys(ctx)).toHaveLength(files);
  });

  it('a refused upload does not keep its key', async () => {
    const { owner, classId } = await createClassWithRoles(ctx);
    const task = await createTask(ctx, classId, owner);
    const key = newKey();
    const empty = await ctx.http
      .post(`/tasks/${task.id}/attachments`)
      .set('Authorization', owner.auth)
      .set('Idempotency-Key', key)
      .field('note', 'no file');
    expect(empty.status).toBe(400);
    const upload = await ctx.http
      .post(`/tasks/${task.id}/attachments`)
      .set('Authorization', owner.auth)
      .set('Idempotency-Key', key)
      .attach('file', Buffer.from('now with a file'), { filename: 'a.txt', contentType: 'text/plain' });
    expect(upload.status).toBe(201);
  });

  it('keys past 24 hours are claimed anew, and the clean-up job deletes them in batches', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const old = newKey();
    expect((await postClass(owner, old, { name: 'Yesterday' })).status).toBe(201);
    const fresh = newKey();
    expect((await postClass(owner, fresh, { name: 'Today' })).status).toBe(201);
    await ctx.db.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE user_id = $1 AND key = $2`,
      [owner.id, old],
    );
    const reused = await postClass(owner, old, { name: 'Another day' });
    expect(reused.status).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();

    await ctx.db.query(
      `INSERT INTO idempotency_keys (user_id, key, request_method, request_path, created_at)
       SELECT $1, 'expired-' || g, 'POST', '/classes', now() - interval '25 hours' FROM generate_series(1, 1500) g`,
      [owner.id],
    );
    const deleted = await ctx.app.get(IdempotencyCleanupService).deleteExpired();
    expect(deleted).toBeGreaterThanOrEqual(1500);
    const left = await ctx.db.query(`SELECT key FROM idempotency_keys WHERE user_id = $1 ORDER BY key`, [
      owner.id,
    ]);
    expect(left.map((row: { key: string }) => row.key).sort()).toEqual([fresh, old].sort());
  });
});

describe('Idempotency-Key on two instances of one database', () => {
  const [first, second] = useSharedInstances({}, {});

  it('concurrent repeats on both instances run the request once', async () => {
    const { owner } = await createClassWithRoles(first);
    const before = await classCount(first, owner);
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? second : first).http
          .post('/classes')
          .set('Authorization', owner.auth)
          .set('Idempotency-Key', key)
          .send({ name: 'Raced' }),
      ),
    );
    const ran = answers.filter((res) => res.status === 201 && !res.headers['idempotent-replayed']);
    expect(ran).toHaveLength(1);
    for (const res of answers) {
      if (res.status === 201) expect(res.body).toEqual(ran[0].body);
      else expect([res.status, res.body]).toEqual([409, apiError('CONFLICT')]);
    }
    expect(await classCount(first, owner)).toBe(before + 1);
    const replay = await second.http
      .post('/classes')
      .set('Authorization', owner.auth)
      .set('Idempotency-Key', key)
      .send({ name: 'Raced' });
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
  });

  it('a request in flight on one instance is a 409 on the other', async () => {
    const { owner, classId } = await createClassWithRoles(first);
    const key = newKey();
    const patch = (app: TestApp) =>
      app.http
        .patch(`/classes/${classId}`)
        .set('Authorization', owner.auth)
        .set('Idempotency-Key', key)
        .send({ description: 'Twice?' });
    const answer = await withClassLocked(first, classId, async () => {
      const pending = patch(first).then((res) => res);
      await waitForLockWaiters(first.db, 1);
      const repeat = await patch(second);
      expect([repeat.status, repeat.body]).toEqual([409, apiError('CONFLICT')]);
      return { pending };
    });
    expect(answer.status).toBe(200);
    const replay = await patch(second);
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect(replay.body).toEqual(answer.body);
  });
});
