import { randomBytes } from 'node:crypto';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import request from 'supertest';
import { FileStorage } from '../../src/files/file-storage';
import { LocalFileStorage } from '../../src/files/local-file-storage';
import { STORAGE_DRIVERS, useStorageEnv } from '../fakes/s3-server';
import { apiError as error } from '../utils/expect';
import { listStoredKeys } from '../utils/files';
import { useTestApp } from '../utils/test-app';
import {
  ClassWithRoles,
  createClassWithRoles,
  createDraft,
  createTask,
  uploadTaskAttachment,
} from '../utils/tasks';
import { TestUser } from '../utils/users';
import { sleep } from '../utils/wait';

const MAX_BYTES = 64 * 1024;
const NAME = '作业说明.pdf';

describe.each(STORAGE_DRIVERS)('task attachments and GET /files/:fileKey, %s storage', (driver) => {
  const storage = useStorageEnv(driver, { UPLOAD_MAX_BYTES: String(MAX_BYTES) });
  const ctx = useTestApp(storage.env);
  let cls: ClassWithRoles;

  const storedKeys = (): Promise<string[]> => listStoredKeys(ctx);
  /** Removal of a refused upload may finish just after the answer: wait for the storage to settle. */
  const expectStoredCount = async (count: number): Promise<void> => {
    for (let waited = 0; (await storedKeys()).length !== count && waited < 2000; waited += 20) {
      await sleep(20);
    }
    expect(await storedKeys()).toHaveLength(count);
  };
  const upload = (taskId: string, user: TestUser | null, content: Buffer, name = NAME): request.Test => {
    const req = ctx.http.post(`/tasks/${taskId}/attachments`);
    if (user) req.set('Authorization', user.auth);
    return req.attach('file', content, { filename: name, contentType: 'application/pdf' });
  };
  const download = (url: string, user: TestUser | null): request.Test => {
    const req = ctx.http.get(url).buffer(true).responseType('blob');
    return user ? req.set('Authorization', user.auth) : req;
  };

  beforeAll(async () => {
    cls = await createClassWithRoles(ctx);
  });

  it('stores an upload with its UTF-8 name and serves the same bytes back with download headers', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const content = Buffer.concat([Buffer.from([0, 255, 0, 13, 10]), randomBytes(20_000)]);
    const res = await upload(task.id, cls.admin, content);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      fileKey: expect.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
      originalName: NAME,
      mimeType: 'application/pdf',
      sizeBytes: content.length,
      url: `/files/${res.body.fileKey}`,
      createdAt: expect.stringMatching(/Z$/),
    });
    expect(await storedKeys()).toContain(res.body.fileKey);
    expect(
      (await ctx.http.get(`/tasks/${task.id}`).set('Authorization', cls.member.auth)).body.attachments,
    ).toEqual([res.body]);

    for (const user of [cls.member, cls.owner, cls.admin]) {
      const file = await download(res.body.url, user);
      expect(file.status).toBe(200);
      expect(Buffer.compare(file.body as Buffer, content)).toBe(0);
      expect(file.headers['content-type']).toBe('application/pdf');
      expect(file.headers['content-length']).toBe(String(content.length));
      expect(file.headers['x-content-type-options']).toBe('nosniff');
      expect(file.headers['content-disposition']).toBe(
        `attachment; filename="____.pdf"; filename*=UTF-8''${encodeURIComponent(NAME)}`,
      );
    }
  });

  // The local driver's own concern: an S3 bucket has no file modes.
  (driver === 'local' ? it : it.skip)(
    "keeps stored files and their folders to the service's own account",
    async () => {
      const task = await createTask(ctx, cls.classId, cls.owner);
      const { fileKey } = (await upload(task.id, cls.owner, randomBytes(100)).expect(201)).body;
      const root = join(ctx.dataDir, 'files');
      for (const [path, mode] of [
        [root, 0o700],
        [join(root, fileKey.slice(0, 2)), 0o700],
        [join(root, fileKey.slice(0, 2), fileKey), 0o600],
      ] as const) {
        expect(statSync(path).mode & 0o777).toBe(mode);
      }
      // A root left world-readable by an earlier version is closed at start.
      chmodSync(root, 0o755);
      new LocalFileStorage(root);
      expect(statSync(root).mode & 0o777).toBe(0o700);
    },
  );

  it('keeps awkward ASCII names intact in filename* and safe in the fallback', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const name = `it's "100%" (final)*.txt`;
    const res = await upload(task.id, cls.owner, Buffer.from('x'), name).expect(201);
    expect(res.body.originalName).toBe(name);
    const file = await download(res.body.url, cls.member);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="it's _100__ (final)*.txt"; filename*=UTF-8''it%27s%20%22100%25%22%20%28final%29%2A.txt`,
    );
  });

  it('answers 413 for a file over UPLOAD_MAX_BYTES and leaves no file behind', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const before = (await storedKeys()).length;
    const res = await upload(task.id, cls.owner, randomBytes(MAX_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(error('PAYLOAD_TOO_LARGE'));
    await expectStoredCount(before);
    await upload(task.id, cls.owner, randomBytes(MAX_BYTES)).expect(201);
  });

  it('answers 400 without a file part or with a name over 255 characters', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const res = await ctx.http
      .post(`/tasks/${task.id}/attachments`)
      .set('Authorization', cls.owner.auth)
      .field('note', 'x');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(error('VALIDATION_ERROR'));
    const empty = await ctx.http.post(`/tasks/${task.id}/attachments`).set('Authorization', cls.owner.auth);
    expect(empty.status).toBe(400);
    const before = (await storedKeys()).length;
    const longName = await upload(task.id, cls.owner, Buffer.from('x'), `${'名'.repeat(252)}.pdf`);
    expect(longName.status).toBe(400);
    expect(longName.body).toEqual(error('VALIDATION_ERROR'));
    await expectStoredCount(before);
    const longest = await upload(task.id, cls.owner, Buffer.from('x'), `${'名'.repeat(251)}.pdf`);
    expect(longest.status).toBe(201);
    expect(longest.body.originalName).toHaveLength(255);
  });

  it('lets only OWNER and ADMIN upload, and removes the refused file', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const before = (await storedKeys()).length;
    expect((await upload(task.id, cls.member, Buffer.from('x'))).body).toEqual(error('FORBIDDEN'));
    expect((await upload(task.id, cls.outsider, Buffer.from('x'))).body).toEqual(error('FORBIDDEN'));
    expect((await upload(task.id, null, Buffer.from('x'))).body).toEqual(error('UNAUTHORIZED'));
    expect((await upload('00000000-0000-4000-8000-000000000000', cls.owner, Buffer.from('x'))).body).toEqual(
      error('NOT_FOUND'),
    );
    await expectStoredCount(before);
  });

  it('serves task files to whoever can see the task only', async () => {
    const draft = await createDraft(ctx, cls.classId, cls.owner);
    const attachment = await uploadTaskAttachment(ctx, draft.id, cls.owner, {
      name: 'a.txt',
      content: 'draft notes',
    });
    expect((await download(attachment.url, cls.admin)).status).toBe(200);
    expect((await download(attachment.url, cls.member)).status).toBe(404);
    const outsider = await download(attachment.url, cls.outsider);
    expect(outsider.status).toBe(403);
    expect(JSON.parse((outsider.body as Buffer).toString())).toEqual(error('FORBIDDEN'));
    expect((await download(attachment.url, null)).status).toBe(401);
    const unknown = await download('/files/NoSuchKeyNoSuchKey1234', cls.owner);
    expect(unknown.status).toBe(404);
    expect(JSON.parse((unknown.body as Buffer).toString())).toEqual(error('NOT_FOUND'));
    expect((await download('/files/..%2F..%2Fetc%2Fpasswd', cls.owner)).status).toBe(404);
  });

  it('serves submission files to the submitter and the class OWNER/ADMIN only', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const classmate = (await createClassWithRoles(ctx)).member;
    await ctx.db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'MEMBER')`, [
      cls.classId,
      classmate.id,
    ]);
    const content = randomBytes(3000);
    const stored = await ctx.app.get(FileStorage).put(Readable.from([content]), MAX_BYTES);
    await ctx.db.query(
      `WITH s AS (INSERT INTO submissions (task_id, user_id) VALUES ($1, $2) RETURNING id)
       INSERT INTO submission_attachments (submission_id, file_key, original_name, mime_type, size_bytes)
       SELECT s.id, $3, '报告.docx', NULL, $4 FROM s`,
      [task.id, cls.member.id, stored.key, content.length],
    );
    for (const user of [cls.member, cls.owner, cls.admin]) {
      const file = await download(`/files/${stored.key}`, user);
      expect(file.status).toBe(200);
      expect(Buffer.compare(file.body as Buffer, content)).toBe(0);
      expect(file.headers['content-type']).toBe('application/octet-stream');
    }
    expect((await download(`/files/${stored.key}`, classmate)).status).toBe(403);
    expect((await download(`/files/${stored.key}`, cls.outsider)).status).toBe(403);
  });

  it('DELETE /tasks/:taskId/attachments/:id removes row and file; OWNER/ADMIN only', async () => {
    const task = await createTask(ctx, cls.classId, cls.owner);
    const otherTask = await createTask(ctx, cls.classId, cls.owner);
    const attachment = await uploadTaskAttachment(ctx, task.id, cls.owner, {
      name: 'x.bin',
      content: 'bytes',
    });
    const remove = (taskId: string, user: TestUser | null) => {
      const req = ctx.http.delete(`/tasks/${taskId}/attachments/${attachment.id}`);
      return user ? req.set('Authorization', user.auth) : req;
    };
    expect((await remove(task.id, cls.member)).body).toEqual(error('FORBIDDEN'));
    expect((await remove(task.id, cls.outsider)).body).toEqual(error('FORBIDDEN'));
    expect((await remove(task.id, null)).status).toBe(401);
    expect((await remove(otherTask.id, cls.owner)).body).toEqual(error('NOT_FOUND'));
    expect(
      (await ctx.http.delete(`/tasks/${task.id}/attachments/nope`).set('Authorization', cls.owner.auth))
        .status,
    ).toBe(400);
    // Access is answered before the attachment id is checked: a caller without it learns nothing more.
    const draft = await createDraft(ctx, cls.classId, cls.owner);
    for (const [taskId, user, code] of [
      [task.id, cls.outsider, 'FORBIDDEN'],
      [task.id, cls.member, 'FORBIDDEN'],
      [draft.id, cls.member, 'NOT_FOUND'],
    ] as const) {
      const res = await ctx.http.delete(`/tasks/${taskId}/attachments/nope`).set('Authorization', user.auth);
      expect(res.body).toEqual(error(code));
    }
    expect(await storedKeys()).toContain(attachment.fileKey);

    await remove(task.id, cls.admin).expect(204);
    expect(await storedKeys()).not.toContain(attachment.fileKey);
    expect(
      (await ctx.http.get(`/tasks/${task.id}`).set('Authorization', cls.owner.auth)).body.attachments,
    ).toEqual([]);
    expect((await download(attachment.url, cls.owner)).status).toBe(404);
    expect((await remove(task.id, cls.owner)).body).toEqual(error('NOT_FOUND'));
  });

  it('deleting a task removes its files from the storage, whether hard or soft', async () => {
    const hard = await createTask(ctx, cls.classId, cls.owner);
    const soft = await createTask(ctx, cls.classId, cls.owner);
    const hardFiles = await Promise.all(
      [1, 2].map((n) => uploadTaskAttachment(ctx, hard.id, cls.owner, { name: `${n}.txt`, content: `${n}` })),
    );
    const softFile = await uploadTaskAttachment(ctx, soft.id, cls.owner, { name: 's.txt', content: 's' });
    await ctx.db.query(`INSERT INTO submissions (task_id, user_id) VALUES ($1, $2)`, [
      soft.id,
      cls.member.id,
    ]);

    await ctx.http.delete(`/tasks/${hard.id}`).set('Authorization', cls.owner.auth).expect(204);
    for (const file of hardFiles) expect(await storedKeys()).not.toContain(file.fileKey);
    expect(
      (await ctx.db.query(`SELECT count(*)::int AS n FROM task_attachments WHERE task_id = $1`, [hard.id]))[0]
        .n,
    ).toBe(0);

    await ctx.http.delete(`/tasks/${soft.id}`).set('Authorization', cls.owner.auth).expect(204);
    expect(await storedKeys()).not.toContain(softFile.fileKey);
    expect(
      (await ctx.db.query(`SELECT count(*)::int AS n FROM task_attachments WHERE task_id = $1`, [soft.id]))[0]
        .n,
    ).toBe(0);
    expect((await ctx.db.query(`SELECT count(*)::int AS n FROM tasks WHERE id = $1`, [soft.id]))[0].n).toBe(
      1,
    );
  });
});
