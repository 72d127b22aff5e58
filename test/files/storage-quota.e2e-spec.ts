import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { FileSweeper } from '../../src/files/file-sweeper';
import { MULTIPART_ENVELOPE_ALLOWANCE } from '../../src/files/storage-quota';
import { S3Server, useStorageEnv } from '../fakes/s3-server';
import { apiError as error } from '../utils/expect';
import { listStoredKeys } from '../utils/files';
import { useTestApp } from '../utils/test-app';
import { ClassWithRoles, createClassWithRoles, createTask } from '../utils/tasks';
import { TestUser } from '../utils/users';

const QUOTA = 10_000;

/**
 * STORAGE_QUOTA_BYTES_PER_USER and failures of the store, over the S3 driver (the quota is decided in the
 * database, whichever the driver): submission and task attachments, uploads, downloads and deletes.
 */
describe('storage quota and store failures, s3 storage', () => {
  const storage = useStorageEnv('s3', { STORAGE_QUOTA_BYTES_PER_USER: String(QUOTA) });
  const ctx = useTestApp(storage.env);
  const s3 = (): S3Server => storage.s3()!;
  let cls: ClassWithRoles;

  const submitFile = (taskId: string, user: TestUser, bytes: number): request.Test =>
    ctx.http
      .post(`/tasks/${taskId}/submissions/me/attachments`)
      .set('Authorization', user.auth)
      .attach('file', randomBytes(bytes), { filename: 'report.pdf', contentType: 'application/pdf' });
  const attachToTask = (taskId: string, user: TestUser, bytes: number): request.Test =>
    ctx.http
      .post(`/tasks/${taskId}/attachments`)
      .set('Authorization', user.auth)
      .attach('file', randomBytes(bytes), { filename: 'sheet.pdf', contentType: 'application/pdf' });
  const reservations = async (): Promise<number> =>
    (await ctx.db.query(`SELECT count(*)::int AS n FROM storage_reservations`))[0].n;

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx);
  });

  it('counts submission files to the submitter: 403 QUOTA_EXCEEDED past the quota, nothing stored', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const first = await submitFile(task.id, cls.member, 4000).expect(201);
    await submitFile(task.id, cls.member, 4000).expect(201);
    const keysBefore = await listStoredKeys(ctx);

    const refused = await submitFile(task.id, cls.member, 4000);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(error('QUOTA_EXCEEDED'));
    expect(await listStoredKeys(ctx)).toEqual(keysBefore);
    expect(await reservations()).toBe(0);
    // Access is answered first: a caller who may not upload learns nothing of any quota.
    expect((await submitFile(task.id, cls.outsider, 4000)).body).toEqual(error('FORBIDDEN'));

    // Another user has a quota of their own; a deleted file frees its bytes.
    await submitFile(task.id, cls.admin, 4000).expect(201);
    await ctx.http
      .delete(`/tasks/${task.id}/submissions/me/attachments/${first.body.id}`)
      .set('Authorization', cls.member.auth)
      .expect(204);
    expect(await listStoredKeys(ctx)).not.toContain(first.body.fileKey);
    const again = await submitFile(task.id, cls.member, 4000).expect(201);
    const file = await ctx.http.get(again.body.url).set('Authorization', cls.owner.auth).buffer(true);
    expect(file.status).toBe(200);
    expect(file.headers['content-length']).toBe('4000');
  });

  it('counts task files to their uploader, OWNER or ADMIN', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    await attachToTask(task.id, cls.owner, QUOTA - 1000).expect(201);
    const otherTask = await createTask(ctx, cls.classId, cls.owner);
    await submitFile(otherTask.id, cls.owner, 1000).expect(201);
    expect((await attachToTask(task.id, cls.owner, 1)).body).toEqual(error('QUOTA_EXCEEDED'));
    expect((await attachToTask(task.id, cls.admin, 1000)).status).toBe(201);
  });

  it('counts file bytes, not the multipart envelope: a file that brings the total exactly to the quota is stored, one byte more is not', async () => {
    const { member } = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    await ctx.db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'MEMBER')`, [
      cls.classId,
      member.id,
    ]);
    await submitFile(task.id, member, QUOTA - 3000).expect(201);
    const keysBefore = await listStoredKeys(ctx);

    // Declared with its envelope the request passes the quota; the file itself would too, by one byte: it is
    // received, found over, and removed.
    const over = await submitFile(task.id, member, 3001);
    expect(over.status).toBe(403);
    expect(over.body).toEqual(error('QUOTA_EXCEEDED'));
    expect(await listStoredKeys(ctx)).toEqual(keysBefore);
    expect(await reservations()).toBe(0);
    // Far over, it is refused before its body is stored.
    expect((await submitFile(task.id, member, 3000 + MULTIPART_ENVELOPE_ALLOWANCE + 1)).body).toEqual(
      error('QUOTA_EXCEEDED'),
    );
    expect(await listStoredKeys(ctx)).toEqual(keysBefore);

    const exact = await submitFile(task.id, member, 3000);
    expect(exact.status).toBe(201);
    const [{ total }] = await ctx.db.query(
      `SELECT sum(sa.size_bytes)::int AS total FROM submission_attachments sa
         JOIN submissions s ON s.id = sa.submission_id WHERE s.user_id = $1`,
      [member.id],
    );
    expect(total).toBe(QUOTA);
    expect((await submitFile(task.id, member, 1)).body).toEqual(error('QUOTA_EXCEEDED'));
    expect(await reservations()).toBe(0);
  });

  it('lets concurrent uploads of one user pass only as far as the quota holds', async () => {
    const { member } = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    await ctx.db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'MEMBER')`, [
      cls.classId,
      member.id,
    ]);
    // Each declares a little over 4,000 bytes: two files fit in 10,000, a third does not.
    const answers = await Promise.all(Array.from({ length: 6 }, () => submitFile(task.id, member, 4000)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 201, 403, 403, 403, 403]);
    const [{ total }] = await ctx.db.query(
      `SELECT sum(sa.size_bytes)::int AS total FROM submission_attachments sa
         JOIN submissions s ON s.id = sa.submission_id WHERE s.user_id = $1`,
      [member.id],
    );
    expect(total).toBe(8000);
    expect(await reservations()).toBe(0);
  });

  it('answers 503 STORAGE_UNAVAILABLE while the store is down, leaves no row without its object, and the sweep catches the rest', async () => {
    const task = await createTask(ctx, cls.classId, cls.admin);
    const kept = await attachToTask(task.id, cls.admin, 1000).expect(201);
    const dropped = await attachToTask(task.id, cls.admin, 1000).expect(201);
    const rows = async (): Promise<number> =>
      (await ctx.db.query(`SELECT count(*)::int AS n FROM task_attachments WHERE task_id = $1`, [task.id]))[0]
        .n;

    await s3().stop();
    try {
      const upload = await attachToTask(task.id, cls.admin, 1000);
      expect(upload.status).toBe(503);
      expect(upload.body).toEqual(error('STORAGE_UNAVAILABLE'));
      expect(await rows()).toBe(2);
      expect(await reservations()).toBe(0);

      const download = await ctx.http.get(kept.body.url).set('Authorization', cls.member.auth);
      expect(download.status).toBe(503);
      expect(download.body).toEqual(error('STORAGE_UNAVAILABLE'));

      // The row goes first; its object stays behind for the sweep.
      await ctx.http
        .delete(`/tasks/${task.id}/attachments/${dropped.body.id}`)
        .set('Authorization', cls.admin.auth)
        .expect(204);
      expect(await rows()).toBe(1);

      const health = await ctx.http.get('/health').expect(200);
      expect(health.body).toEqual({ status: 'ok', storage: 'unavailable' });
    } finally {
      await s3().start();
    }

    expect(await listStoredKeys(ctx)).toContain(dropped.body.fileKey);
    const swept = await ctx.app.get(FileSweeper).sweep({ graceMs: 0 });
    expect(swept?.orphans).toBeGreaterThanOrEqual(1);
    const left = await listStoredKeys(ctx);
    expect(left).not.toContain(dropped.body.fileKey);
    expect(left).toContain(kept.body.fileKey);
    const download = await ctx.http.get(kept.body.url).set('Authorization', cls.member.auth);
    expect(download.status).toBe(200);
  });
});
