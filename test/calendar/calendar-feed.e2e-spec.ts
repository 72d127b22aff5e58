import ICAL from 'ical.js';
import { apiError } from '../utils/expect';
import { attachQueryCounter } from '../utils/query-counter';
import { putSubmission, seedTask } from '../utils/submissions';
import { ClassWithRoles, createClassWithRoles, createTask } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { TestUser } from '../utils/users';

const PUBLIC_URL = 'https://api.example.test:8443/base';
const APP_URL = 'http://app.test';
const FEED_URL = /^https:\/\/api\.example\.test:8443\/base\/calendar\/([A-Za-z0-9_-]{43})\.ics$/;
/** 200 characters of 3-octet UTF-8: a SUMMARY line of 608 octets. */
const LONG_TITLE = '漢字テスト'.repeat(40);
const ESCAPED_TITLE = 'Essay, part 1; notes \\ draft';
/** Control characters (bell, escape, vertical tab, DEL, a C1 one) that RFC 5545 TEXT does not allow. */
const CONTROL_TITLE = 'Bell\u0007 escape\u001b[31m tab\tvt\u000b del\u007f c1\u0085 end';

interface FeedEvent {
  uid: string;
  summary: string;
  description: string;
  url: string;
  start: string;
  end: string;
  hasEnd: boolean;
  categories: string[];
  dtstamp: string;
  lastModified: string;
}

/** The events of a feed as ical.js reads them, by task id. */
function parseFeed(body: string): Map<string, FeedEvent> {
  const calendar = new ICAL.Component(ICAL.parse(body));
  expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
  const events = new Map<string, FeedEvent>();
  for (const vevent of calendar.getAllSubcomponents('vevent')) {
    const time = (name: string) => (vevent.getFirstPropertyValue(name) as ICAL.Time).toJSDate().toISOString();
    const uid = String(vevent.getFirstPropertyValue('uid'));
    events.set(uid.split('@')[0], {
      uid,
      summary: String(vevent.getFirstPropertyValue('summary')),
      description: String(vevent.getFirstPropertyValue('description')),
      url: String(vevent.getFirstPropertyValue('url')),
      start: time('dtstart'),
      // RFC 5545, section 3.6.1: without DTEND and DURATION, the event ends when it starts.
      end: new ICAL.Event(vevent).endDate.toJSDate().toISOString(),
      hasEnd: vevent.hasProperty('dtend') || vevent.hasProperty('duration'),
      categories: vevent
        .getAllProperties('categories')
        .flatMap((property) => property.getValues().map(String)),
      dtstamp: time('dtstamp'),
      lastModified: time('last-modified'),
    });
  }
  return events;
}

describe('calendar feed', () => {
  const ctx = useTestApp({ PUBLIC_URL, APP_URL });
  let roles: ClassWithRoles;
  const tasks: Record<string, string> = {};
  const due = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

  const enable = async (user: TestUser) => {
    const res = await ctx.http.put('/users/me/calendar-feed').set('Authorization', user.auth).expect(200);
    expect(res.body).toEqual({ url: expect.stringMatching(FEED_URL), enabled: true });
    return new URL(res.body.url as string).pathname.replace('/base', '');
  };
  const fetchFeed = (path: string) => ctx.http.get(path).buffer(true);

  beforeAll(async () => {
    roles = await createClassWithRoles(ctx);
    const { classId, owner } = roles;
    tasks.escaped = (await createTask(ctx, classId, owner, { title: ESCAPED_TITLE, dueAt: due(3) })).id;
    tasks.long = (await createTask(ctx, classId, owner, { title: LONG_TITLE, dueAt: due(4) })).id;
    tasks.control = await seedTask(ctx, classId, { title: CONTROL_TITLE, dueAt: due(2) });
    tasks.noDeadline = (await createTask(ctx, classId, owner, { title: 'No deadline' })).id;
    tasks.recent = await seedTask(ctx, classId, { title: 'Due 59 days ago', dueAt: due(-59) });
    tasks.old = await seedTask(ctx, classId, { title: 'Due 61 days ago', dueAt: due(-61) });
    tasks.draft = await seedTask(ctx, classId, { title: 'Draft', dueAt: due(5), isPublished: false });
    tasks.scheduled = await seedTask(ctx, classId, { title: 'Scheduled', startAt: due(1), dueAt: due(6) });
    tasks.deleted = await seedTask(ctx, classId, { title: 'Deleted', dueAt: due(7) });
    await ctx.http.delete(`/tasks/${tasks.deleted}`).set('Authorization', owner.auth).expect(204);
  });

  describe('PUT, GET, DELETE /users/me/calendar-feed', () => {
    it.each(['put', 'get', 'delete'] as const)('%s without a login token: 401', async (method) => {
      const res = await ctx.http[method]('/users/me/calendar-feed');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(apiError('UNAUTHORIZED'));
    });

    it('PUT makes an address, shown once; GET tells only whether it is on; DELETE turns it off', async () => {
      const user = roles.admin;
      const status = () =>
        ctx.http.get('/users/me/calendar-feed').set('Authorization', user.auth).expect(200);
      expect((await status()).body).toEqual({ url: null, enabled: false });
      const path = await enable(user);
      expect((await status()).body).toEqual({ url: null, enabled: true });
      await fetchFeed(path).expect(200);
      // Only a hash of the token is kept.
      const token = FEED_URL.exec(`${PUBLIC_URL}${path}`)![1];
      const stored: { token_hash: Buffer }[] = await ctx.db.query(
        `SELECT token_hash FROM calendar_feeds WHERE user_id = $1`,
        [user.id],
      );
      expect(stored).toHaveLength(1);
      expect(stored[0].token_hash.toString()).not.toContain(token);
      expect(stored[0].token_hash.toString('base64url')).not.toBe(token);

      await ctx.http.delete('/users/me/calendar-feed').set('Authorization', user.auth).expect(204);
      expect((await status()).body).toEqual({ url: null, enabled: false });
      const gone = await fetchFeed(path);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual(apiError('NOT_FOUND'));
      // Off already: still 204.
      await ctx.http.delete('/users/me/calendar-feed').set('Authorization', user.auth).expect(204);
    });

    it('a second PUT rotates the address: the old one answers 404 at once', async () => {
      const first = await enable(roles.member);
      const second = await enable(roles.member);
      expect(second).not.toBe(first);
      expect((await fetchFeed(first)).status).toBe(404);
      await fetchFeed(second).expect(200);
    });

    it('unknown and malformed addresses: 404', async () => {
      for (const path of [`/calendar/${'A'.repeat(43)}.ics`, '/calendar/short.ics']) {
        const res = await fetchFeed(path);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(apiError('NOT_FOUND'));
      }
    });

    it("a deactivated user's feed: 404", async () => {
      const { owner } = await createClassWithRoles(ctx);
      const path = await enable(owner);
      await ctx.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [owner.id]);
      expect((await fetchFeed(path)).status).toBe(404);
    });
  });

  describe('GET /calendar/<token>.ics', () => {
    it('a MEMBER: published, started tasks with a deadline from 60 days ago on, as RFC 5545 events', async () => {
      const path = await enable(roles.member);
      const res = await fetchFeed(path).expect(200);
      expect(res.headers['content-type']).toBe('text/calendar; charset=utf-8');
      const events = parseFeed(res.text);
      expect([...events.keys()].sort()).toEqual(
        [tasks.escaped, tasks.long, tasks.recent, tasks.control].sort(),
      );
      expect(events.get(tasks.control)!.summary).toBe('Bell escape[31m tab\tvt del c1 end');

      const escaped = events.get(tasks.escaped)!;
      const [task] = await ctx.db.query(`SELECT due_at, updated_at FROM tasks WHERE id = $1`, [
        tasks.escaped,
      ]);
      expect(escaped).toMatchObject({
        uid: `${tasks.escaped}@api.example.test`,
        summary: ESCAPED_TITLE,
        description: `Class: ${roles.className}\n${APP_URL}/tasks/${tasks.escaped}`,
        url: `${APP_URL}/tasks/${tasks.escaped}`,
        start: new Date(Math.floor(task.due_at.getTime() / 1000) * 1000).toISOString(),
        categories: [],
      });
      // A deadline is an instant: no DTEND equal to DTSTART, which strict clients refuse.
      expect(escaped.end).toBe(escaped.start);
      expect(escaped.hasEnd).toBe(false);
      expect(escaped.lastModified).toBe(
        new Date(Math.floor(task.updated_at.getTime() / 1000) * 1000).toISOString(),
      );
      expect(escaped.dtstamp).toBe(escaped.lastModified);
      expect(events.get(tasks.long)!.summary).toBe(LONG_TITLE);
    });

    it('writes CRLF lines of at most 75 octets, escaped text, UTC times and folded UTF-8 titles', async () => {
      const res = await fetchFeed(await enable(roles.member)).expect(200);
      const body: string = res.text;
      expect(body.endsWith('\r\n')).toBe(true);
      expect(body.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
      const lines = body.split('\r\n').slice(0, -1);
      for (const line of lines) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
      expect(lines).toContain('SUMMARY:Essay\\, part 1\\; notes \\\\ draft');
      expect(lines.some((line) => /^DESCRIPTION:Class: .*\\n/.test(line.replace(/\r\n /g, '')))).toBe(true);
      expect(lines.filter((line) => line.startsWith('DTSTART:'))[0]).toMatch(/^DTSTART:\d{8}T\d{6}Z$/);
      expect(lines.filter((line) => /^(DTEND|DURATION)[:;]/.test(line))).toEqual([]);
      // No control character but the line ends and a tab (RFC 5545 TEXT allows no other).
      expect(body.replace(/\r\n/g, '')).not.toMatch(/[\0-\x08\x0a-\x1f\x7f-\x9f]/);
      // The long title: folded, every continuation starting with a space, no character cut in two.
      const start = lines.findIndex((line) => line.startsWith(`SUMMARY:${LONG_TITLE.slice(0, 5)}`));
      let summary = lines[start];
      for (let i = start + 1; lines[i].startsWith(' '); i += 1) summary += lines[i].slice(1);
      expect(summary).toBe(`SUMMARY:${LONG_TITLE}`);
      expect(Buffer.from(body, 'utf8').toString('utf8')).toBe(body);
    });

    it('OWNER and ADMIN see scheduled tasks too; nobody sees drafts, deleted tasks or other classes', async () => {
      for (const user of [roles.owner, roles.admin]) {
        const events = parseFeed((await fetchFeed(await enable(user)).expect(200)).text);
        expect([...events.keys()].sort()).toEqual(
          [tasks.escaped, tasks.long, tasks.recent, tasks.scheduled, tasks.control].sort(),
        );
      }
      const outsider = parseFeed((await fetchFeed(await enable(roles.outsider)).expect(200)).text);
      expect(outsider.size).toBe(0);
    });

    it('marks a task the user submitted with CATEGORIES:SUBMITTED', async () => {
      const { classId, owner, member, admin } = await createClassWithRoles(ctx);
      const taskId = (await createTask(ctx, classId, owner, { dueAt: due(2) })).id;
      await putSubmission(ctx, taskId, member, 'done');
      const mine = parseFeed((await fetchFeed(await enable(member)).expect(200)).text);
      expect(mine.get(taskId)!.categories).toEqual(['SUBMITTED']);
      const theirs = parseFeed((await fetchFeed(await enable(admin)).expect(200)).text);
      expect(theirs.get(taskId)!.categories).toEqual([]);
    });

    it("shows each user's own deadline: a MEMBER's extension moves that MEMBER's event only", async () => {
      const { classId, owner, member, admin } = await createClassWithRoles(ctx);
      const taskId = (await createTask(ctx, classId, owner, { dueAt: due(2) })).id;
      const extended = new Date(Math.floor(Date.now() / 1000) * 1000 + 9 * 86_400_000).toISOString();
      const memberPath = await enable(member);
      const before = parseFeed((await fetchFeed(memberPath).expect(200)).text).get(taskId)!;
      await ctx.http
        .put(`/tasks/${taskId}/extensions/${member.id}`)
        .set('Authorization', owner.auth)
        .send({ dueAt: extended })
        .expect(200);
      const mine = parseFeed((await fetchFeed(memberPath).expect(200)).text).get(taskId)!;
      expect(mine.start).toBe(extended);
      expect(mine.end).toBe(extended);
      expect(Date.parse(mine.lastModified)).toBeGreaterThanOrEqual(Date.parse(before.lastModified));
      const theirs = parseFeed((await fetchFeed(await enable(admin)).expect(200)).text).get(taskId)!;
      expect(theirs.start).toBe(before.start);
    });

    it('ETag and If-None-Match: 304 without a body while nothing changed, 200 once a task changed', async () => {
      const path = await enable(roles.member);
      const first = await fetchFeed(path).expect(200);
      const etag = first.headers.etag;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const again = await fetchFeed(path).set('If-None-Match', etag).expect(304);
      expect(again.text).toBe('');
      // What a browser's fetch sends along with If-None-Match.
      const fromBrowser = await fetchFeed(path)
        .set('If-None-Match', etag)
        .set('Cache-Control', 'no-cache')
        .set('Pragma', 'no-cache');
      expect([fromBrowser.status, fromBrowser.text]).toEqual([304, '']);
      await ctx.http
        .patch(`/tasks/${tasks.escaped}`)
        .set('Authorization', roles.owner.auth)
        .send({ dueAt: due(3.5) })
        .expect(200);
      const changed = await fetchFeed(path).set('If-None-Match', etag).expect(200);
      expect(changed.headers.etag).not.toBe(etag);
    });

    it('is in the OpenAPI document: text/calendar, 304 and 404, no login token', async () => {
      const { body } = await ctx.http.get('/openapi.json').expect(200);
      const feed = body.paths['/calendar/{token}.ics'].get;
      expect(Object.keys(feed.responses).sort()).toEqual(['200', '304', '404', '408', '503']);
      expect(Object.keys(feed.responses['200'].content)).toEqual(['text/calendar']);
      expect(feed.security).toBeUndefined();
      expect(Object.keys(body.paths['/users/me/calendar-feed']).sort()).toEqual(['delete', 'get', 'put']);
    });

    it('costs one statement', async () => {
      const path = await enable(roles.member);
      const counter = attachQueryCounter(ctx);
      try {
        const statements = await counter.record(() => fetchFeed(path).expect(200));
        expect(statements).toHaveLength(1);
      } finally {
        counter.detach();
      }
    });
  });
});
