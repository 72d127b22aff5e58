import { parse } from 'csv-parse/sync';
import { ClientRequest, get as httpGet, IncomingMessage } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { apiError as error } from '../utils/expect';
import { addMember, createClass } from '../utils/classes';
import { attachQueryCounter, QueryCounter } from '../utils/query-counter';
import { putSubmission, seedMembers, seedSubmissions, seedTask } from '../utils/submissions';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';
import { poolIsFree } from '../utils/pool';

const HEADER =
  'Nickname,School,Student number,Class,Task title,First submission time,Last update time,Score'.split(',');
/** EXPORT_STALL_TIMEOUT_MS of this file: long enough for every check made while an export stalls. */
const STALL_TIMEOUT_MS = 4000;

/** Collects the raw response bytes, so BOM and line ends are checked as sent. */
function rawBytes(res: request.Response, done: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

describe('submissions export', () => {
  let ctx: TestApp;
  let counter: QueryCounter;

  const exportCsv = (taskId: string, user: TestUser) =>
    ctx.http
      .get(`/tasks/${taskId}/submissions/export`)
      .set('Authorization', user.auth)
      .buffer(true)
      .parse(rawBytes);
  const parseCsv = (body: Buffer): string[][] => parse(body, { bom: true });

  /** Inserts a submission with fixed times and score (the API cannot set past times). */
  async function submitAt(taskId: string, userId: string, first: string, last: string, score: number | null) {
    await ctx.db.query(
      `INSERT INTO submissions (task_id, user_id, content, first_submitted_at, last_updated_at, score)
       VALUES ($1, $2, 'x', $3, $4, $5)`,
      [taskId, userId, first, last, score],
    );
  }

  beforeAll(async () => {
    // Background jobs stay quiet, so the pool counts below are the export's alone.
    ctx = await createTestApp({
      DELIVERY_POLL_INTERVAL_MS: '2000000000',
      SCHEDULER_CRON: '0 0 0 1 1 *',
      EXPORT_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS),
    });
    await ctx.app.listen(0);
    counter = attachQueryCounter(ctx);
  });
  afterAll(async () => {
    counter.detach();
    await ctx.close();
  });

  describe('a small class, byte for byte', () => {
    let owner: TestUser;
    let admin: TestUser;
    let member: TestUser;
    let outsider: TestUser;
    let taskId: string;

    beforeAll(async () => {
      [owner, admin, member, outsider] = await Promise.all([
        createUser(ctx, { nickname: 'Olivia', timezone: 'Asia/Shanghai' }),
        createUser(ctx, { nickname: 'adam', timezone: 'America/New_York' }),
        createUser(ctx, { nickname: 'Smith, John "JJ"' }),
        createUser(ctx),
      ]);
      const cls = await createClass(ctx, owner, { name: 'Algebra' });
      await addMember(ctx, cls.id, admin, ClassRole.ADMIN);
      await addMember(ctx, cls.id, member);
      taskId = await seedTask(ctx, cls.id, { title: 'Quiz 1' });
      await submitAt(taskId, member.id, '2026-03-01T01:30:00.000Z', '2026-07-15T12:00:00.123Z', 12.5);
    });

    it('sends the exact CSV export: headers, BOM, CRLF, quoting, times in the caller zone', async () => {
      const res = await exportCsv(taskId, owner).expect(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="task-${taskId}-submissions.csv"`,
      );
      const body = res.body as Buffer;
      expect([...body.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(body.subarray(3).toString('utf8')).toBe(
        'Nickname,School,Student number,Class,Task title,First submission time,Last update time,Score\r\n' +
          'Olivia,,,Algebra,Quiz 1,,,\r\n' +
          'adam,,,Algebra,Quiz 1,,,\r\n' +
          '"Smith, John ""JJ""",,,Algebra,Quiz 1,2026-03-01T09:30:00.000+08:00,2026-07-15T20:00:00.123+08:00,12.5\r\n',
      );
    });

    it("writes times in the exporting user's own zone, with its offset", async () => {
      const rows = parseCsv((await exportCsv(taskId, admin).expect(200)).body);
      expect(rows[3].slice(5)).toEqual([
        '2026-02-28T20:30:00.000-05:00',
        '2026-07-15T08:00:00.123-04:00',
        '12.5',
      ]);
    });

    it('is for OWNER and ADMIN only', async () => {
      for (const [user, status, code] of [
        [member, 403, 'FORBIDDEN'],
        [outsider, 403, 'FORBIDDEN'],
      ] as const) {
        const res = await ctx.http.get(`/tasks/${taskId}/submissions/export`).set('Authorization', user.auth);
        expect([res.status, res.headers['content-type'], res.body]).toEqual([
          status,
          expect.stringMatching(/^application\/json/),
          error(code),
        ]);
      }
      const anonymous = await ctx.http.get(`/tasks/${taskId}/submissions/export`);
      expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
    });
  });

  describe('hostile and international cells', () => {
    it('round-trips through a CSV parser cell by cell, with the formula guard', async () => {
      const [{ id: schoolId }] = await ctx.db.query(
        `INSERT INTO schools (name) VALUES ('Hill, "North" School') RETURNING id`,
      );
      const owner = await createUser(ctx, { nickname: '=SUM(A1:A9)', timezone: 'Asia/Kolkata' });
      const cls = await createClass(ctx, owner, { name: 'Physik, 1. "Klasse"' });
      const taskId = await seedTask(ctx, cls.id, { title: '@Lab: "Optics"\nPart 2' });
      const people: { nickname: string | null; email?: string; studentId?: string; expected: string }[] = [
        { nickname: 'Smith, John "JJ"', studentId: '007', expected: 'Smith, John "JJ"' },
        { nickname: 'Line one\nLine two\r\nthree', expected: 'Line one\nLine two\r\nthree' },
        { nickname: '张三 Zhāng Sān 🎓', studentId: '=1+2', expected: '张三 Zhāng Sān 🎓' },
        { nickname: null, email: 'fallback@example.com', expected: 'fallback@example.com' },
        { nickname: '+plus', expected: "'+plus" },
        { nickname: '-minus', expected: "'-minus" },
        { nickname: '@at', studentId: '-5', expected: "'@at" },
        { nickname: '\ttab', expected: "'\ttab" },
        { nickname: '\rcarriage', expected: "'\rcarriage" },
        { nickname: 'safe=later', expected: 'safe=later' },
      ];
      const users = [];
      for (const person of people) {
        const user = await createUser(ctx, {
          nickname: person.nickname,
          email: person.email,
          schoolId: person.studentId ? schoolId : undefined,
          studentId: person.studentId,
        });
        await addMember(ctx, cls.id, user);
        users.push(user);
      }
      await submitAt(taskId, users[0].id, '2026-01-10T18:45:00.000Z', '2026-01-10T18:45:00.000Z', 99.25);
      await submitAt(taskId, users[2].id, '2026-03-31T23:59:59.999Z', '2026-04-01T00:00:00.000Z', null);

      const res = await exportCsv(taskId, owner).expect(200);
      const text = (res.body as Buffer).toString('utf8');
      // Every record ends with CRLF, including the last one.
      expect(text.endsWith('\r\n')).toBe(true);
      const rows = parseCsv(res.body);
      expect(rows[0]).toEqual(HEADER);
      expect(rows).toHaveLength(1 + 1 + people.length);
      expect(rows.every((row) => row.length === HEADER.length)).toBe(true);

      // The export is ordered like the grader's list.
      const listed = await ctx.http
        .get(`/tasks/${taskId}/submissions`)
        .set('Authorization', owner.auth)
        .expect(200);
      const byUser = new Map(users.map((user, i) => [user.id, people[i].expected]));
      expect(rows.slice(1).map((row) => row[0])).toEqual(
        listed.body.map((entry: { userId: string }) =>
          entry.userId === owner.id ? "'=SUM(A1:A9)" : byUser.get(entry.userId),
        ),
      );

      const row = (nickname: string) => rows.find((cells) => cells[0] === nickname);
      const classCell = 'Physik, 1. "Klasse"';
      const titleCell = `'@Lab: "Optics"\nPart 2`;
      expect(row("'=SUM(A1:A9)")).toEqual(["'=SUM(A1:A9)", '', '', classCell, titleCell, '', '', '']);
      expect(row('Smith, John "JJ"')).toEqual([
        'Smith, John "JJ"',
        'Hill, "North" School',
        '007',
        classCell,
        titleCell,
        '2026-01-11T00:15:00.000+05:30',
        '2026-01-11T00:15:00.000+05:30',
        '99.25',
      ]);
      expect(row('张三 Zhāng Sān 🎓')).toEqual([
        '张三 Zhāng Sān 🎓',
        'Hill, "North" School',
        "'=1+2",
        classCell,
        titleCell,
        '2026-04-01T05:29:59.999+05:30',
        '2026-04-01T05:30:00.000+05:30',
        '',
      ]);
      expect(row("'@at")?.slice(0, 3)).toEqual(["'@at", 'Hill, "North" School', "'-5"]);
      for (const person of people) {
        expect(row(person.expected)).toBeDefined();
      }
      for (const cells of rows
        .slice(1)
        .filter((cells) => cells[0] !== 'Smith, John "JJ"' && cells[0] !== '张三 Zhāng Sān 🎓')) {
        expect(cells.slice(5)).toEqual(['', '', '']);
      }
    });
  });

  describe('cost', () => {
    /** A class with `members` MEMBERs (half of them submitted) and the statements list and export cost. */
    async function statementsFor(members: number): Promise<{ list: string[]; csv: string[]; rows: number }> {
      const owner = await createUser(ctx);
      const cls = await createClass(ctx, owner);
      const taskId = await seedTask(ctx, cls.id);
      const ids = await seedMembers(ctx, cls.id, members);
      await seedSubmissions(ctx, taskId, ids.slice(0, members / 2));
      await putSubmission(ctx, taskId, owner, 'with an attachment below');
      await ctx.http
        .post(`/tasks/${taskId}/submissions/me/attachments`)
        .set('Authorization', owner.auth)
        .attach('file', Buffer.from('x'), 'x.txt')
        .expect(201);
      let listed: request.Response | undefined;
      const list = await counter.record(async () => {
        listed = await ctx.http
          .get(`/tasks/${taskId}/submissions`)
          .set('Authorization', owner.auth)
          .expect(200);
      });
      let rows = 0;
      const csv = await counter.record(async () => {
        rows = parseCsv((await exportCsv(taskId, owner).expect(200)).body).length;
      });
      expect(listed?.body).toHaveLength(members + 1);
      return { list, csv, rows };
    }

    it('is a fixed number of queries for the list and the export, whatever the class size', async () => {
      const small = await statementsFor(10);
      const large = await statementsFor(300);
      expect(small.rows).toBe(1 + 11);
      expect(large.rows).toBe(1 + 301);
      expect(large.list).toHaveLength(small.list.length);
      expect(large.csv).toHaveLength(small.csv.length);
      expect(small.list.length).toBeLessThanOrEqual(5);
      expect(small.csv.length).toBeLessThanOrEqual(4);
    });
  });

  describe('streaming', () => {
    /** Backends of this database busy with an export query (an open cursor counts as busy). */
    const exportBackends = async (): Promise<number> =>
      (
        await ctx.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
              AND query LIKE '%"firstSubmittedAt"%'`,
        )
      )[0].n;
    const until = async (done: () => Promise<boolean> | boolean, ms: number): Promise<void> => {
      for (const start = Date.now(); Date.now() - start < ms && !(await done());) await sleep(20);
    };

    let owner: TestUser;
    let classId: string;
    let bigTask: string;

    beforeAll(async () => {
      owner = await createUser(ctx);
      ({ id: classId } = await createClass(ctx, owner, { name: 'C'.repeat(100) }));
      bigTask = await seedTask(ctx, classId, { title: 'T'.repeat(200) });
      // About 8 MB of CSV: more than the socket buffers hold, so the server is still streaming when the client stops.
      await seedMembers(ctx, classId, 20_000, 'n'.repeat(80));
    });

    /** Starts an export of the big task without reading it; `responses` gets each one whose headers came. */
    const startExport = (responses: IncomingMessage[]): ClientRequest => {
      const { port } = ctx.app.getHttpServer().address() as AddressInfo;
      return httpGet(
        { port, path: `/tasks/${bigTask}/submissions/export`, headers: { Authorization: owner.auth } },
        (response) => {
          response.pause();
          responses.push(response);
        },
      ).on('error', () => undefined);
    };

    it('gives the database connection back when the client disconnects mid-export', async () => {
      const responses: IncomingMessage[] = [];
      startExport(responses);
      await until(() => responses.length === 1, 10_000);
      const [response] = responses;
      expect(response.statusCode).toBe(200);
      let ended = false;
      response.on('end', () => (ended = true));
      response.resume();
      await new Promise((resolve) => response.once('data', resolve));
      response.pause();
      await sleep(200);
      expect(ended).toBe(false);
      expect(await exportBackends()).toBe(1);
      // The export's connection is of the export pool: the API's pool has all of its own to give.
      expect(await poolIsFree(ctx)).toBe(true);
      response.destroy();

      await until(async () => (await exportBackends()) === 0, 2000);
      expect(await exportBackends()).toBe(0);

      // The pool still serves the next export.
      const small = await seedTask(ctx, (await createClass(ctx, owner)).id, { title: 'Small' });
      expect(parseCsv((await exportCsv(small, owner).expect(200)).body)).toHaveLength(2);
    });

    it('keeps the API answering while more exports stall than its pool has connections', async () => {
      const responses: IncomingMessage[] = [];
      // DATABASE_POOL_SIZE is 10: eleven stalled cursors on the API's pool would leave it nothing.
      const requests = Array.from({ length: 11 }, () => startExport(responses));
      await until(async () => responses.length === 2 && (await exportBackends()) === 2, 10_000);
      await sleep(300);
      // EXPORT_CONCURRENCY (2) stream, the others wait for a connection of the export pool.
      expect(responses).toHaveLength(2);
      expect(await exportBackends()).toBe(2);

      const started = Date.now();
      await ctx.http.get(`/tasks/${bigTask}`).set('Authorization', owner.auth).expect(200);
      await ctx.http.get(`/tasks/${bigTask}/submissions/me`).set('Authorization', owner.auth).expect(404);
      expect(Date.now() - started).toBeLessThan(STALL_TIMEOUT_MS);

      for (const req of requests) req.destroy();
      await until(async () => (await exportBackends()) === 0 && (await poolIsFree(ctx)), 5000);
      expect(await exportBackends()).toBe(0);
    });

    it('cuts an export whose client takes nothing for EXPORT_STALL_TIMEOUT_MS', async () => {
      const responses: IncomingMessage[] = [];
      startExport(responses);
      await until(() => responses.length === 1, 10_000);
      const [response] = responses;
      response.resume();
      await new Promise((resolve) => response.once('data', resolve));
      response.pause();
      await sleep(STALL_TIMEOUT_MS / 2);
      expect(await exportBackends()).toBe(1);

      await until(async () => (await exportBackends()) === 0, STALL_TIMEOUT_MS * 2);
      expect(await exportBackends()).toBe(0);
      // Reading on, the client finds the file cut short: the connection closes without the end of the body.
      const outcome = new Promise((resolve) => {
        response.on('end', () => resolve('complete'));
        response.on('error', () => resolve('cut'));
        response.on('aborted', () => resolve('cut'));
      });
      response.resume();
      expect(await outcome).toBe('cut');
    });
  });
});
