import { createHash } from 'node:crypto';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { addMember, createClass } from '../utils/classes';
import { apiError, ISO_TIMESTAMP } from '../utils/expect';
import { attachQueryCounter, QueryCounter } from '../utils/query-counter';
import { putSubmission, seedMembers, seedTask } from '../utils/submissions';
import { UNKNOWN_ID } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

interface Cell {
  taskId: string;
  status: string;
  score: number | null;
  isLate: boolean;
  releasedAt: string | null;
  version: number | null;
}

interface Row {
  userId: string;
  nickname: string | null;
  avatarHash: string;
  studentId: string | null;
  cells: Cell[];
  graded: number;
  totalScore: number;
}

interface Gradebook {
  tasks: { id: string; title: string; dueAt: string | null; maxPoints: number | null }[];
  rows: Row[];
  nextCursor: string | null;
}

const PAST = '2020-01-01T00:00:00.000Z';
const FUTURE = '2099-01-01T00:00:00.000Z';
const EMPTY = { score: null, isLate: false, releasedAt: null, version: null };

describe('gradebook', () => {
  const ctx = useTestApp();
  let owner: TestUser;
  let admin: TestUser;
  let ann: TestUser;
  let bob: TestUser;
  let cleo: TestUser;
  let outsider: TestUser;
  let classId: string;
  /** Columns in gradebook order. */
  let tasks: { early: string; late: string; open: string; manual: string };
  let counter: QueryCounter;

  const get = (path: string, user: TestUser | null) => {
    const req = ctx.http.get(`/classes/${classId}${path}`);
    return user ? req.set('Authorization', user.auth) : req;
  };
  const grade = (taskId: string, submissionId: string, body: object) =>
    ctx.http
      .patch(`/tasks/${taskId}/submissions/${submissionId}/grade`)
      .set('Authorization', owner.auth)
      .send(body)
      .expect(200);
  const cellOf = (book: { rows: Row[] }, user: TestUser, taskId: string): Cell =>
    book.rows.find((row) => row.userId === user.id)!.cells.find((cell) => cell.taskId === taskId)!;

  beforeAll(async () => {
    owner = await createUser(ctx, { nickname: 'Owner' });
    admin = await createUser(ctx, { nickname: 'Admin' });
    ann = await createUser(ctx, { nickname: 'ann' });
    bob = await createUser(ctx, { nickname: 'Bob' });
    cleo = await createUser(ctx, { nickname: '=cmd' });
    outsider = await createUser(ctx, { nickname: 'Outsider' });
    const [school] = await ctx.db.query(`INSERT INTO schools (name) VALUES ('Northside') RETURNING id`);
    await ctx.db.query(`UPDATE users SET school_id = $2, student_id = 'S-1' WHERE id = $1`, [
      ann.id,
      school.id,
    ]);
    ({ id: classId } = await createClass(ctx, owner, { name: 'Physics' }));
    await addMember(ctx, classId, admin, ClassRole.ADMIN);
    for (const user of [ann, bob, cleo]) await addMember(ctx, classId, user);
    counter = attachQueryCounter(ctx);

    // Created out of order: the columns go by dueAt (none last), then creation.
    const open = await seedTask(ctx, classId, { title: 'Open essay' });
    const late = await seedTask(ctx, classId, {
      title: 'Lab 2',
      dueAt: '2021-01-01T00:00:00.000Z',
      allowLateSubmission: true,
    });
    const early = await seedTask(ctx, classId, { title: '+Lab 1', dueAt: PAST, allowLateSubmission: true });
    const manual = await seedTask(ctx, classId, { title: 'Quiz', dueAt: FUTURE });
    await ctx.db.query(
      `UPDATE tasks SET grade_release = 'MANUAL', created_at = now() + interval '1 second' WHERE id = $1`,
      [manual],
    );
    // Not columns: a draft, a scheduled task, a deleted one.
    await seedTask(ctx, classId, { title: 'Draft', isPublished: false });
    await seedTask(ctx, classId, { title: 'Scheduled', startAt: FUTURE });
    const deleted = await seedTask(ctx, classId, { title: 'Deleted' });
    await ctx.db.query(`UPDATE tasks SET deleted_at = now() WHERE id = $1`, [deleted]);
    await ctx.db.query(`UPDATE tasks SET rubric_max_points = 12.5 WHERE id = $1`, [early]);
    tasks = { early, late, open, manual };

    // ann: graded on time on `early` (backdated before its deadline), late without a score on `late`,
    // feedback only on `open`, an unreleased grade on `manual`.
    const annEarly = await putSubmission(ctx, early, ann, 'a');
    await ctx.db.query(`UPDATE submissions SET first_submitted_at = '2019-12-31T00:00:00Z' WHERE id = $1`, [
      annEarly.id,
    ]);
    await grade(early, annEarly.id, { score: 9.5 });
    await putSubmission(ctx, late, ann, 'b');
    const annOpen = await putSubmission(ctx, open, ann, 'c');
    await grade(open, annOpen.id, { feedback: 'good start' });
    const annQuiz = await putSubmission(ctx, manual, ann, 'd');
    await grade(manual, annQuiz.id, { score: 4 });
    // bob: an extension keeps `late` NOT_DUE for him; his `open` is returned with a score.
    await ctx.db.query(
      `INSERT INTO task_extensions (task_id, user_id, class_id, due_at, created_by) VALUES ($1, $2, $3, $4, $5)`,
      [late, bob.id, classId, FUTURE, owner.id],
    );
    const bobOpen = await putSubmission(ctx, open, bob, 'e');
    await grade(open, bobOpen.id, { score: 3 });
    await ctx.http
      .post(`/tasks/${open}/submissions/${bobOpen.id}/return`)
      .set('Authorization', owner.auth)
      .send({})
      .expect(200);
  });

  afterAll(() => counter?.detach());

  it('answers the columns and one row per MEMBER with every cell, in one statement', async () => {
    let res!: { status: number; body: Gradebook };
    const statements = await counter.record(async () => {
      res = await get('/gradebook', owner);
    });
    expect(res.status).toBe(200);
    expect(statements).toHaveLength(1);
    const book = res.body;
    expect(book.tasks).toEqual([
      { id: tasks.early, title: '+Lab 1', dueAt: PAST, maxPoints: 12.5 },
      { id: tasks.late, title: 'Lab 2', dueAt: '2021-01-01T00:00:00.000Z', maxPoints: null },
      { id: tasks.manual, title: 'Quiz', dueAt: FUTURE, maxPoints: null },
      { id: tasks.open, title: 'Open essay', dueAt: null, maxPoints: null },
    ]);
    // MEMBERs only, by display name, case-insensitive.
    expect(book.rows.map((row) => row.userId)).toEqual([cleo.id, ann.id, bob.id]);
    expect(book.nextCursor).toBeNull();
    const annRow = book.rows[1];
    expect(annRow).toMatchObject({
      nickname: 'ann',
      studentId: 'S-1',
      avatarHash: createHash('sha256').update(ann.email.trim().toLowerCase()).digest('hex'),
      graded: 2,
      totalScore: 13.5,
    });
    expect(annRow.cells.map((cell) => cell.taskId)).toEqual(book.tasks.map((task) => task.id));
    expect(cellOf(book, ann, tasks.early)).toEqual({
      taskId: tasks.early,
      status: 'GRADED',
      score: 9.5,
      isLate: false,
      releasedAt: expect.stringMatching(ISO_TIMESTAMP),
      version: 1,
    });
    expect(cellOf(book, ann, tasks.late)).toMatchObject({
      status: 'SUBMITTED',
      score: null,
      isLate: true,
      version: 1,
    });
    expect(cellOf(book, ann, tasks.open)).toMatchObject({ status: 'SUBMITTED', score: null, isLate: false });
    // OWNER and ADMIN see the unreleased grade.
    expect(cellOf(book, ann, tasks.manual)).toMatchObject({ status: 'GRADED', score: 4, releasedAt: null });

    expect(cellOf(book, bob, tasks.early)).toEqual({ taskId: tasks.early, status: 'MISSING', ...EMPTY });
    expect(cellOf(book, bob, tasks.late)).toEqual({ taskId: tasks.late, status: 'NOT_DUE', ...EMPTY });
    expect(cellOf(book, bob, tasks.open)).toMatchObject({ status: 'RETURNED', score: 3 });
    expect(cellOf(book, cleo, tasks.open)).toEqual({ taskId: tasks.open, status: 'NOT_DUE', ...EMPTY });
    expect(cellOf(book, cleo, tasks.late)).toEqual({ taskId: tasks.late, status: 'MISSING', ...EMPTY });
    expect(book.rows[0]).toMatchObject({ graded: 0, totalScore: 0 });
  });

  it('pages the rows with a cursor; a malformed cursor or limit is 400', async () => {
    const first = (await get('/gradebook?limit=2', admin).expect(200)).body as Gradebook;
    expect(first.rows.map((row) => row.userId)).toEqual([cleo.id, ann.id]);
    const next = (await get(`/gradebook?limit=2&cursor=${first.nextCursor}`, admin).expect(200))
      .body as Gradebook;
    expect(next.rows.map((row) => row.userId)).toEqual([bob.id]);
    expect(next.nextCursor).toBeNull();
    expect(next.tasks).toEqual(first.tasks);
    const wrongShape = Buffer.from(JSON.stringify(['a', 'b', 'not-a-uuid'])).toString('base64url');
    for (const query of [
      '?cursor=bm9wZQ',
      `?cursor=${wrongShape}`,
      '?cursor=%24',
      '?limit=0',
      '?limit=201',
      '?limit=x',
    ]) {
      const res = await get(`/gradebook${query}`, owner);
      expect([query, res.status, res.body]).toEqual([query, 400, apiError('VALIDATION_ERROR')]);
    }
  });

  it('a large class pages at most 200 rows, 50 by default', async () => {
    const { id: big } = await createClass(ctx, owner, { name: 'Big' });
    await seedMembers(ctx, big, 230);
    await seedTask(ctx, big, { dueAt: PAST });
    const page = (path: string) => ctx.http.get(`/classes/${big}${path}`).set('Authorization', owner.auth);
    expect(((await page('/gradebook').expect(200)).body as Gradebook).rows).toHaveLength(50);
    const full = (await page('/gradebook?limit=200').expect(200)).body as Gradebook;
    expect(full.rows).toHaveLength(200);
    const rest = (await page(`/gradebook?limit=200&cursor=${full.nextCursor}`).expect(200)).body as Gradebook;
    expect(rest.rows).toHaveLength(30);
    expect(new Set([...full.rows, ...rest.rows].map((row) => row.userId)).size).toBe(230);
  });

  it('carries an ETag; If-None-Match answers 304 until a grade changes', async () => {
    const first = await get('/gradebook', owner).expect(200);
    const tag = first.headers.etag;
    expect(tag).toMatch(/^"/);
    const again = await get('/gradebook', owner).set('If-None-Match', tag).set('Cache-Control', 'no-cache');
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const cleoWork = await putSubmission(ctx, tasks.open, cleo, 'x');
    const changed = await get('/gradebook', owner).set('If-None-Match', tag).expect(200);
    expect(cellOf(changed.body as Gradebook, cleo, tasks.open)).toMatchObject({
      status: 'SUBMITTED',
      version: 1,
    });
    await ctx.db.query(`DELETE FROM submissions WHERE id = $1`, [cleoWork.id]);
    const mine = await get('/gradebook/me', ann).expect(200);
    await get('/gradebook/me', ann).set('If-None-Match', mine.headers.etag).expect(304);
  });

  it('every role: OWNER and ADMIN read the gradebook and the CSV; MEMBER 403, outsider 403, no token 401, unknown class 404', async () => {
    for (const path of ['/gradebook', '/gradebook.csv']) {
      await get(path, owner).expect(200);
      await get(path, admin).expect(200);
      expect((await get(path, ann).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await get(path, outsider).expect(403)).body).toEqual(apiError('FORBIDDEN'));
      expect((await get(path, null).expect(401)).body).toEqual(apiError('UNAUTHORIZED'));
      const unknown = await ctx.http.get(`/classes/${UNKNOWN_ID}${path}`).set('Authorization', owner.auth);
      expect([unknown.status, unknown.body]).toEqual([404, apiError('NOT_FOUND')]);
    }
    for (const user of [owner, admin, ann]) await get('/gradebook/me', user).expect(200);
    expect((await get('/gradebook/me', outsider).expect(403)).body).toEqual(apiError('FORBIDDEN'));
    expect((await get('/gradebook/me', null).expect(401)).body).toEqual(apiError('UNAUTHORIZED'));
    const bad = await ctx.http.get('/classes/nope/gradebook/me').set('Authorization', ann.auth);
    expect([bad.status, bad.body]).toEqual([400, apiError('VALIDATION_ERROR')]);
  });

  it("gradebook/me: the caller's own row, released grades only", async () => {
    const { tasks: columns, row } = (await get('/gradebook/me', ann).expect(200)).body as {
      tasks: Gradebook['tasks'];
      row: Row;
    };
    expect(columns.map((task) => task.id)).toEqual([tasks.early, tasks.late, tasks.manual, tasks.open]);
    expect(row).toMatchObject({ userId: ann.id, nickname: 'ann', graded: 1, totalScore: 9.5 });
    expect(row.cells.find((cell) => cell.taskId === tasks.manual)).toEqual({
      taskId: tasks.manual,
      status: 'SUBMITTED',
      score: null,
      isLate: false,
      releasedAt: null,
      version: 1,
    });
    await ctx.http.post(`/tasks/${tasks.manual}/grades/release`).set('Authorization', owner.auth).expect(200);
    const released = (await get('/gradebook/me', ann).expect(200)).body as { row: Row };
    expect(released.row).toMatchObject({ graded: 2, totalScore: 13.5 });
    expect(released.row.cells.find((cell) => cell.taskId === tasks.manual)).toMatchObject({
      status: 'GRADED',
      score: 4,
    });
    // The OWNER's own row: no submissions, every cell empty.
    const own = (await get('/gradebook/me', owner).expect(200)).body as { row: Row };
    expect(own.row).toMatchObject({ userId: owner.id, graded: 0, totalScore: 0 });
  });

  it('the CSV: BOM, CRLF, a column per task; the score, missing, late or empty; formula guard', async () => {
    const res = await get('/gradebook.csv', owner)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="class-${classId}-gradebook.csv"`);
    const text = (res.body as Buffer).toString('utf8');
    expect(text.startsWith('\uFEFF')).toBe(true);
    expect(text.slice(1).split('\r\n')).toEqual([
      "Nickname,Student number,'+Lab 1,Lab 2,Quiz,Open essay",
      "'=cmd,,missing,missing,,",
      'ann,S-1,9.5,late,4,',
      'Bob,,missing,,,3',
      '',
    ]);
  });
});
