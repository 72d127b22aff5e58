import { connect } from 'node:net';
import { runCommand } from '../../src/cli/commands';
import { createClass, createClassWithMembers } from '../utils/classes';
import { listeningUrl, openStream, StreamClient } from '../utils/event-streams';
import { apiError, ISO_TIMESTAMP } from '../utils/expect';
import {
  createSharedDatabase,
  FAST_NOTIFICATIONS,
  IDLE_JOBS,
  inbox,
  useSharedInstances,
  waitFor,
} from '../utils/notifications';
import { createDraft, createTask } from '../utils/tasks';
import { createTestApp, TestApp, useTestApp } from '../utils/test-app';
import { createUser, TEST_PASSWORD, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';
import { poolIsFree } from '../utils/pool';

const HEARTBEAT_MS = 200;
const STREAM_ENV = {
  ...IDLE_JOBS,
  LOG_LEVEL: 'error',
  NOTIFICATION_STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS),
};

/** Inserts `count` SENT notifications for `user`, one second apart, oldest first; answers their ids in that order. */
async function seedInbox(ctx: TestApp, user: TestUser, count = 1): Promise<string[]> {
  const cls = await createClass(ctx, user, { name: 'Stream class' });
  const task = await createDraft(ctx, cls.id, user, { title: 'Stream task' });
  const rows: { id: string }[] = await ctx.db.query(
    `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, hours_before, due_at,
                                title, content, status, created_at)
     SELECT $1, 'TASK_DUE_REMINDER', $2, $3, 'Stream task', 'Stream class', g, now() + interval '1 day',
            'Title ' || g, 'Content ' || g, 'SENT', now() - interval '1 hour' + g * interval '1 second'
       FROM generate_series(1, $4) g
     ORDER BY g
     RETURNING id`,
    [user.id, task.id, cls.id, count],
  );
  return rows.map((row) => row.id);
}

/** The raw response of GET /stream (for statuses, heartbeats and the end of a stream). */
const rawStream = (baseUrl: string, headers: Record<string, string>, query = '') =>
  fetch(`${baseUrl}/users/me/notifications/stream${query}`, { headers });

/** Reads `response` until `done` says so or the stream ends; answers the text and whether it ended. */
async function readUntil(
  response: Response,
  done: (text: string) => boolean,
  timeoutMs: number,
): Promise<{ text: string; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (!done(text)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`nothing expected within ${timeoutMs} ms; got ${JSON.stringify(text)}`);
      const chunk = await Promise.race([reader.read(), sleep(left).then(() => null)]);
      if (!chunk) continue;
      if (chunk.done) return { text, ended: true };
      text += decoder.decode(chunk.value, { stream: true });
    }
    return { text, ended: false };
  } finally {
    reader.releaseLock();
  }
}

const streamRows = (ctx: TestApp, user: TestUser): Promise<unknown[]> =>
  ctx.db.query(`SELECT id FROM notification_streams WHERE user_id = $1`, [user.id]);

describe('live inbox: one instance', () => {
  const ctx = useTestApp(STREAM_ENV);
  let baseUrl: string;
  const clients: StreamClient[] = [];
  const open = async (...args: Parameters<typeof openStream>) => {
    const client = await openStream(...args);
    clients.push(client);
    return client;
  };
  const bearer = (user: TestUser) => ({ headers: { Authorization: user.auth } });

  beforeAll(async () => {
    baseUrl = await listeningUrl(ctx);
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  it('sends the unread count on open, each new inbox item as the inbox shows it, and every count change', async () => {
    const user = await createUser(ctx);
    const [older] = await seedInbox(ctx, user);
    const stream = await open(baseUrl, bearer(user));
    expect((await stream.next('unread')).data).toEqual({ unreadCount: 1 });

    const seen = stream.events.length;
    const started = Date.now();
    const [added] = await seedInbox(ctx, user);
    const notification = await stream.next('notification', seen);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(notification.id).toBe(added);
    const listed = await inbox(ctx, user);
    expect(notification.data).toEqual(listed.items.find((item) => item.id === added));
    expect((await stream.next('unread', seen)).data).toEqual({ unreadCount: 2 });

    let count = stream.events.length;
    await ctx.http.patch(`/users/me/notifications/${older}/read`).set('Authorization', user.auth).expect(200);
    expect((await stream.next('unread', count)).data).toEqual({ unreadCount: 1 });

    count = stream.events.length;
    await ctx.http.post('/users/me/notifications/read-all').set('Authorization', user.auth).expect(200);
    expect((await stream.next('unread', count)).data).toEqual({ unreadCount: 0 });
    // Reading an item already read changes nothing: no event.
    count = stream.events.length;
    await ctx.http.patch(`/users/me/notifications/${older}/read`).set('Authorization', user.auth).expect(200);
    await sleep(300);
    expect(stream.events.slice(count)).toEqual([]);
  });

  it("sends nothing of other users' inboxes", async () => {
    const [user, other] = [await createUser(ctx), await createUser(ctx)];
    const stream = await open(baseUrl, bearer(user));
    await stream.next('unread');
    await seedInbox(ctx, other);
    await sleep(300);
    expect(stream.events.map((event) => event.type)).toEqual(['unread']);
  });

  it('replays the items after Last-Event-ID first, oldest first, then the count', async () => {
    const user = await createUser(ctx);
    const ids = await seedInbox(ctx, user, 4);
    const stream = await open(baseUrl, { headers: { Authorization: user.auth, 'Last-Event-ID': ids[1] } });
    await stream.next('unread');
    expect(stream.events.map((event) => [event.type, event.id])).toEqual([
      ['notification', ids[2]],
      ['notification', ids[3]],
      ['unread', expect.any(String)],
    ]);
    expect(stream.events[2].data).toEqual({ unreadCount: 4 });
  });

  it('an unknown or malformed Last-Event-ID replays nothing', async () => {
    const user = await createUser(ctx);
    await seedInbox(ctx, user, 2);
    /** A new item, and its event on `stream`: whatever the stream was sent before it has arrived. */
    const sentinel = async (stream: StreamClient): Promise<string> => {
      const [id] = await seedInbox(ctx, user);
      await waitFor('the sentinel event', async () => stream.events.some((event) => event.id === id));
      return id;
    };
    // The live events of the seeded items are sent before the streams below open, not to them.
    await sentinel(await open(baseUrl, bearer(user)));
    for (const lastEventId of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const stream = await open(baseUrl, {
        headers: { Authorization: user.auth, 'Last-Event-ID': lastEventId },
      });
      const id = await sentinel(stream);
      const notifications = stream.events.filter((event) => event.type === 'notification');
      expect(notifications.map((event) => event.id)).toEqual([id]);
      expect(stream.events[0].type).toBe('unread');
    }
  });

  it('sends a `:` heartbeat comment at the configured interval', async () => {
    const user = await createUser(ctx);
    const response = await rawStream(baseUrl, { Authorization: user.auth });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const started = Date.now();
    const { text } = await readUntil(response, (got) => /(^|\n):\n\n/.test(got), 2_000);
    expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS * 4);
    expect(text).toContain('event: unread');
    await response.body!.cancel();
  });

  it('is in the OpenAPI document: text/event-stream, the ticket, 401 and 429', async () => {
    const { body } = await ctx.http.get('/openapi.json').expect(200);
    const stream = body.paths['/users/me/notifications/stream'].get;
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
    expect(stream.responses).toHaveProperty('401');
    expect(stream.responses).toHaveProperty('429');
    expect(stream.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(
      expect.arrayContaining(['ticket', 'Last-Event-ID']),
    );
    const ticket = body.paths['/users/me/notifications/stream-ticket'].post;
    expect(ticket.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/StreamTicketDto',
    });
  });

  it('needs a login token or a ticket: 401 otherwise', async () => {
    for (const headers of [{}, { Authorization: 'Bearer nonsense' }] as Record<string, string>[]) {
      const response = await rawStream(baseUrl, headers);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(apiError('UNAUTHORIZED'));
    }
    await ctx.http.post('/users/me/notifications/stream-ticket').expect(401);
  });

  describe('tickets', () => {
    const issue = async (user: TestUser) =>
      (
        await ctx.http
          .post('/users/me/notifications/stream-ticket')
          .set('Authorization', user.auth)
          .expect(201)
      ).body as { ticket: string; expiresAt: string };

    it('201 {ticket, expiresAt} 300 s ahead, stored as a hash; the ticket opens a stream', async () => {
      const user = await createUser(ctx);
      const before = Date.now();
      const { ticket, expiresAt } = await issue(user);
      expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(expiresAt).toMatch(ISO_TIMESTAMP);
      expect(Date.parse(expiresAt) - before).toBeGreaterThan(298_000);
      expect(Date.parse(expiresAt) - before).toBeLessThan(302_000);
      const [stored] = await ctx.db.query(
        `SELECT ticket_hash FROM notification_stream_tickets WHERE user_id = $1`,
        [user.id],
      );
      expect(stored.ticket_hash.toString('base64url')).not.toBe(ticket);

      const stream = await open(baseUrl, { query: `ticket=${ticket}` });
      expect((await stream.next('unread')).data).toEqual({ unreadCount: 0 });
    });

    it('reopens its stream until it expires, resuming after Last-Event-ID; the new stream ends the old one', async () => {
      const user = await createUser(ctx);
      const ids = await seedInbox(ctx, user, 3);
      const { ticket } = await issue(user);
      const first = await rawStream(baseUrl, {}, `?ticket=${ticket}`);
      expect(first.status).toBe(200);
      await readUntil(first, (text) => text.includes('event: unread'), 2_000);

      // The browser's reconnect: the same URL, with the id of the last event it received.
      const again = await rawStream(baseUrl, { 'Last-Event-ID': ids[0] }, `?ticket=${ticket}`);
      expect(again.status).toBe(200);
      const { text } = await readUntil(again, (got) => got.includes('event: unread'), 2_000);
      expect([...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1])).toEqual(ids.slice(1));
      // The stream the ticket opened before ends at once, and no longer counts.
      const { ended } = await readUntil(first, () => false, 2_000);
      expect(ended).toBe(true);
      await waitFor('one stream of the user', async () => (await streamRows(ctx, user)).length === 1);
      await again.body!.cancel();
    });

    it('opens one stream at a time under concurrency: of 8 simultaneous uses one stays open', async () => {
      const user = await createUser(ctx);
      const { ticket } = await issue(user);
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => rawStream(baseUrl, {}, `?ticket=${ticket}`)),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
      const ends = await Promise.all(
        responses.map((response) => readUntil(response, () => false, 1_500).catch(() => ({ ended: false }))),
      );
      expect(ends.filter((end) => !end.ended)).toHaveLength(1);
      expect(await streamRows(ctx, user)).toHaveLength(1);
      await Promise.all(responses.map((response) => response.body!.cancel()));
    });

    it('dies with the tokens: a revocation ends its stream, and the ticket no longer opens one', async () => {
      const user = await createUser(ctx);
      const { ticket } = await issue(user);
      const response = await rawStream(baseUrl, {}, `?ticket=${ticket}`);
      await readUntil(response, (text) => text.includes('event: unread'), 2_000);
      await ctx.http
        .patch('/users/me/password')
        .set('Authorization', user.auth)
        .send({ currentPassword: TEST_PASSWORD, newPassword: 'a changed password' })
        .expect(200);
      const { ended } = await readUntil(response, () => false, 5_000).catch(() => ({ ended: false }));
      expect(ended).toBe(true);
      const reopened = await rawStream(baseUrl, {}, `?ticket=${ticket}`);
      expect(reopened.status).toBe(401);
      expect(await reopened.json()).toEqual(apiError('UNAUTHORIZED'));
    });

    it('an expired, unknown or revoked ticket: 401', async () => {
      const user = await createUser(ctx);
      const expired = await issue(user);
      await ctx.db.query(`UPDATE notification_stream_tickets SET expires_at = now() WHERE user_id = $1`, [
        user.id,
      ]);
      const revoked = await issue(user);
      await ctx.db.query(`UPDATE users SET token_version = token_version + 1 WHERE id = $1`, [user.id]);
      for (const ticket of [expired.ticket, revoked.ticket, 'A'.repeat(43), 'short']) {
        const response = await rawStream(baseUrl, {}, `?ticket=${ticket}`);
        expect(response.status).toBe(401);
      }
    });
  });

  it('at most 5 open streams per user: the 6th → 429 RATE_LIMITED; a closed one frees its place', async () => {
    const user = await createUser(ctx);
    const five = await Promise.all(Array.from({ length: 5 }, () => open(baseUrl, bearer(user))));
    const sixth = await rawStream(baseUrl, { Authorization: user.auth });
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toEqual(apiError('RATE_LIMITED'));
    // Another user is not limited by this one's streams.
    await open(baseUrl, bearer(await createUser(ctx)));

    five[0].close();
    await waitFor(
      'the closed stream to be forgotten',
      async () => (await streamRows(ctx, user)).length === 4,
    );
    await open(baseUrl, bearer(user));
  });

  it('drops the stream of a client that stops reading, once 1 MiB waits for it, and frees its place', async () => {
    const user = await createUser(ctx);
    const { port } = new URL(baseUrl);
    // A raw client that sends its request and never reads: the kernel's buffers fill, then the service's.
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause();
    socket.write(
      `GET /users/me/notifications/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${user.auth}\r\n\r\n`,
    );
    try {
      await waitFor('its stream to open', async () => (await streamRows(ctx, user)).length === 1);
      // About 16 MB of events, more than the socket buffers and the 1 MiB the service keeps for a client.
      const [seedId] = await seedInbox(ctx, user);
      await ctx.db.query(
        `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, hours_before, due_at,
                                    title, content, status)
         SELECT user_id, type, task_id, class_id, task_title, class_name, hours_before + g, due_at, title,
                repeat('x', 100000), 'SENT'
           FROM notifications, generate_series(1, 160) g WHERE id = $1`,
        [seedId],
      );
      // Not renewed by the heartbeat any more: its row goes, and the user may open five streams again.
      await waitFor('its row to go', async () => (await streamRows(ctx, user)).length === 0, 5_000);
      await sleep(HEARTBEAT_MS * 3);
      expect(await streamRows(ctx, user)).toEqual([]);
      await Promise.all(Array.from({ length: 5 }, () => open(baseUrl, bearer(user))));
    } finally {
      socket.destroy();
    }
  });

  it('concurrent opens cannot pass the limit', async () => {
    const user = await createUser(ctx);
    const responses = await Promise.all(
      Array.from({ length: 9 }, () => rawStream(baseUrl, { Authorization: user.auth })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(4);
    await Promise.all(responses.map((response) => response.body?.cancel() ?? Promise.resolve()));
  });

  it('an open stream holds no pool connection', async () => {
    const user = await createUser(ctx);
    await Promise.all(Array.from({ length: 5 }, () => open(baseUrl, bearer(user))));
    await waitFor('the pool to be idle', () => poolIsFree(ctx));
  });

  describe('revocation ends the stream', () => {
    it.each([
      [
        'a password change',
        (user: TestUser) =>
          ctx.http
            .patch('/users/me/password')
            .set('Authorization', user.auth)
            .send({ currentPassword: TEST_PASSWORD, newPassword: 'a changed password' })
            .expect(200),
      ],
      ['a deactivation', (user: TestUser) => runCommand(ctx.app, ['users:deactivate', user.email])],
      [
        'a revocation by SQL (logout everywhere)',
        (user: TestUser) =>
          ctx.db.query(`UPDATE users SET token_version = token_version + 1 WHERE id = $1`, [user.id]),
      ],
    ])('%s', async (_what, revoke) => {
      const user = await createUser(ctx);
      const response = await rawStream(baseUrl, { Authorization: user.auth });
      await readUntil(response, (text) => text.includes('event: unread'), 2_000);
      await revoke(user);
      const { ended } = await readUntil(response, () => false, 5_000).catch(() => ({ ended: false }));
      expect(ended).toBe(true);
      await waitFor('its row to go', async () => (await streamRows(ctx, user)).length === 0);
    });
  });
});

/** Its own app, last built: Passport keeps the JWT strategy of the last app for the whole process. */
describe('live inbox: notifications of the jobs', () => {
  it('delivers an item produced by the jobs (publication) within 2 s of entering the inbox', async () => {
    const fast = await createTestApp({ ...FAST_NOTIFICATIONS, NOTIFICATION_STREAM_HEARTBEAT_MS: '200' });
    try {
      const { cls, owner, member } = await createClassWithMembers(fast);
      const stream = await openStream(await listeningUrl(fast), { headers: { Authorization: member.auth } });
      const task = await createTask(fast, cls.id, owner, { title: 'Live task' });
      const notification = await stream.next('notification', 0, 5_000);
      const [row] = await fast.db.query(
        `SELECT extract(epoch FROM now() - created_at) * 1000 AS age FROM notifications WHERE id = $1`,
        [notification.id],
      );
      expect(notification.data).toMatchObject({ taskId: task.id, type: 'TASK_PUBLISHED' });
      expect(Number(row.age)).toBeLessThan(2_000);
      stream.close();
    } finally {
      await fast.close();
    }
  });
});

describe('live inbox: two instances on one database', () => {
  const [first, second] = useSharedInstances(STREAM_ENV, {
    ...FAST_NOTIFICATIONS,
    NOTIFICATION_STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS),
  });

  it('a notification created through instance B reaches a stream on instance A, and so do reads', async () => {
    const { cls, owner, member } = await createClassWithMembers(second);
    const stream = await openStream(await listeningUrl(first), { headers: { Authorization: member.auth } });
    try {
      await stream.next('unread');
      const task = await createTask(second, cls.id, owner, { title: 'Made on B' });
      const notification = await stream.next('notification', 0, 5_000);
      expect(notification.data).toMatchObject({ taskId: task.id, taskTitle: 'Made on B' });
      const count = stream.events.length;
      await second.http
        .post('/users/me/notifications/read-all')
        .set('Authorization', member.auth)
        .expect(200);
      expect((await stream.next('unread', count)).data).toEqual({ unreadCount: 0 });
    } finally {
      stream.close();
    }
  });

  it("a ticket's new stream on instance B ends the one it opened on instance A at once", async () => {
    const user = await createUser(first);
    const { ticket } = (
      await first.http
        .post('/users/me/notifications/stream-ticket')
        .set('Authorization', user.auth)
        .expect(201)
    ).body as { ticket: string };
    const onA = await rawStream(await listeningUrl(first), {}, `?ticket=${ticket}`);
    await readUntil(onA, (text) => text.includes('event: unread'), 2_000);
    const onB = await rawStream(await listeningUrl(second), {}, `?ticket=${ticket}`);
    expect(onB.status).toBe(200);
    // Well within a heartbeat's lease renewal: the instance holding it was told.
    const started = Date.now();
    const { ended } = await readUntil(onA, () => false, 2_000);
    expect(ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    await onB.body!.cancel();
  });

  it('the limit of 5 counts the streams of both instances', async () => {
    const user = await createUser(first);
    const [a, b] = [await listeningUrl(first), await listeningUrl(second)];
    const headers = { headers: { Authorization: user.auth } };
    const opened = await Promise.all([a, a, a, b, b].map((url) => openStream(url, headers)));
    try {
      for (const url of [a, b]) expect((await rawStream(url, { Authorization: user.auth })).status).toBe(429);
    } finally {
      for (const stream of opened) stream.close();
    }
  });
});

describe('live inbox: shutdown', () => {
  it('ends the open streams and removes their rows before the pool closes', async () => {
    const database = await createSharedDatabase();
    const watcher = await createTestApp(IDLE_JOBS, { databaseUrl: database.url });
    try {
      const ctx = await createTestApp(STREAM_ENV, { databaseUrl: database.url });
      const user = await createUser(ctx);
      const response = await rawStream(await listeningUrl(ctx), { Authorization: user.auth });
      await readUntil(response, (text) => text.includes('event: unread'), 2_000);
      expect(await streamRows(watcher, user)).toHaveLength(1);
      const closing = ctx.close();
      const { ended } = await readUntil(response, () => false, 5_000);
      expect(ended).toBe(true);
      await closing;
      expect(await streamRows(watcher, user)).toEqual([]);
    } finally {
      await watcher.close();
      await database.drop();
    }
  });
});
