import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FileStorage } from '../../src/files/file-storage';
import { FileSweeper, SWEEP_LOCK_KEY } from '../../src/files/file-sweeper';
import { startTcpRelay, TcpRelay } from '../fakes/tcp-relay';
import { createTestDatabase, dropTestDatabase, withDatabase } from '../utils/database';
import { createClassWithRoles, createTask, uploadTaskAttachment } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { backdate, startUpload, waitUntil } from '../utils/uploads';
import { TestUser } from '../utils/users';

const HOUR_MS = 60 * 60 * 1000;
const RECENT_MS = 10 * 60 * 1000;

describe('sweep of the file storage', () => {
  let ctx: TestApp;
  let sweeper: FileSweeper;
  let root: string;
  let taskId: string;
  let owner: TestUser;
  let member: TestUser;

  const pathOf = (key: string) => join(root, key.slice(0, 2), key);
  const partials = () => readdirSync(join(root, 'tmp'));
  /** A stored file without a row, last written `ageMs` ago. */
  const plantFile = (ageMs: number): string => {
    const key = randomBytes(24).toString('base64url');
    mkdirSync(join(root, key.slice(0, 2)), { recursive: true });
    writeFileSync(pathOf(key), 'no row');
    backdate(pathOf(key), ageMs);
    return key;
  };
  const plantPartial = (ageMs: number): string => {
    const path = join(root, 'tmp', `${randomBytes(24).toString('base64url')}.partial`);
    writeFileSync(path, 'cut short');
    backdate(path, ageMs);
    return path;
  };

  beforeAll(async () => {
    ctx = await createTestApp();
    sweeper = ctx.app.get(FileSweeper);
    root = join(ctx.dataDir, 'files');
    const cls = await createClassWithRoles(ctx);
    ({ owner, member } = cls);
    taskId = (await createTask(ctx, cls.classId, cls.owner)).id;
  });
  afterAll(async () => ctx.close());

  it('removes stale partial uploads and files without a row; keeps attached files and anything recent', async () => {
    const attached = await uploadTaskAttachment(ctx, taskId, owner, { name: 'a.txt', content: 'kept' });
    const submitted = await ctx.app.get(FileStorage).put(Readable.from([Buffer.from('handed in')]), 100);
    await ctx.db.query(
      `WITH s AS (INSERT INTO submissions (task_id, user_id) VALUES ($1, $2) RETURNING id)
       INSERT INTO submission_attachments (submission_id, file_key, original_name, size_bytes)
       SELECT s.id, $3, 'r.txt', 9 FROM s`,
      [taskId, member.id, submitted.key],
    );
    for (const key of [attached.fileKey, submitted.key]) backdate(pathOf(key), 2 * HOUR_MS);
    const orphan = plantFile(2 * HOUR_MS);
    const recentOrphan = plantFile(RECENT_MS);
    const stalePartial = plantPartial(2 * HOUR_MS);
    const recentPartial = plantPartial(RECENT_MS);
    // Quota reservations: one a crash left two hours ago, one of an upload in flight.
    await ctx.db.query(
      `INSERT INTO storage_reservations (user_id, bytes, created_at)
       VALUES ($1, 10, now() - interval '2 hours'), ($1, 20, now())`,
      [member.id],
    );

    expect(await sweeper.sweep()).toEqual({ incomplete: 1, reservations: 1, scanned: 4, orphans: 1 });
    expect(await ctx.db.query(`SELECT bytes::int FROM storage_reservations`)).toEqual([{ bytes: 20 }]);
    expect(existsSync(pathOf(orphan))).toBe(false);
    expect(existsSync(stalePartial)).toBe(false);
    for (const path of [
      pathOf(attached.fileKey),
      pathOf(submitted.key),
      pathOf(recentOrphan),
      recentPartial,
    ]) {
      expect(existsSync(path)).toBe(true);
    }
  });

  it('skips its pass while another instance holds the sweep lock', async () => {
    const orphan = plantFile(2 * HOUR_MS);
    const other = ctx.db.createQueryRunner();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [SWEEP_LOCK_KEY]);
      expect(await sweeper.sweep()).toBeNull();
      expect(existsSync(pathOf(orphan))).toBe(true);
      await other.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK_KEY]);
    } finally {
      await other.release();
    }
    expect(await sweeper.sweep()).toMatchObject({ orphans: 1 });
    expect(existsSync(pathOf(orphan))).toBe(false);
  });

  it('looks at a bounded number of files per pass and goes on where the last pass stopped', async () => {
    const orphans = Array.from({ length: 5 }, () => plantFile(2 * HOUR_MS));
    const stored = (await ctx.app.get(FileStorage).list(undefined, 1000)).length;
    const bounds = { pageSize: 2, pagesPerPass: 1 };

    const first = await sweeper.sweep(bounds);
    expect(first).toMatchObject({ scanned: 2 });
    expect(orphans.filter((key) => existsSync(pathOf(key))).length).toBeGreaterThanOrEqual(3);
    let scanned = first!.scanned;
    for (let pass = 1; pass < stored && scanned < stored; pass += 1) {
      scanned += (await sweeper.sweep(bounds))!.scanned;
    }
    expect(scanned).toBe(stored);
    expect(orphans.filter((key) => existsSync(pathOf(key)))).toEqual([]);
  });

  it('leaves the partial file of an upload in flight alone, and the upload completes', async () => {
    const server = ctx.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    let fileKey = '';
    const stale = plantPartial(2 * HOUR_MS);
    const earlier = new Set(partials());
    const content = randomBytes(256 * 1024);
    const upload = startUpload(
      `http://127.0.0.1:${port}/tasks/${taskId}/attachments`,
      owner.auth,
      content.subarray(0, 128 * 1024),
    );
    try {
      const partial = await waitUntil(() => {
        const name = partials().find((entry) => !earlier.has(entry));
        return name && statSync(join(root, 'tmp', name)).size > 0 ? join(root, 'tmp', name) : undefined;
      }, 'the partial file of the upload');

      expect(await sweeper.sweep()).toMatchObject({ incomplete: 1 });
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(partial)).toBe(true);

      const answer = await upload.finish(content.subarray(128 * 1024));
      expect(answer).toMatchObject({ status: 201, body: { sizeBytes: content.length } });
      expect(existsSync(partial)).toBe(false);
      fileKey = (answer.body as { fileKey: string }).fileKey;
    } finally {
      upload.abort();
    }
    const file = await ctx.http
      .get(`/files/${fileKey}`)
      .set('Authorization', owner.auth)
      .buffer(true)
      .responseType('blob');
    expect(Buffer.compare(file.body as Buffer, content)).toBe(0);
  });
});

describe('a sweep while the database is silent', () => {
  const adminUrl = () => process.env.TEST_ADMIN_DATABASE_URL!;
  let relay: TcpRelay;
  let database: string;
  let ctx: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase(adminUrl(), process.env.TEST_TEMPLATE_DATABASE!);
    const server = new URL(adminUrl());
    relay = await startTcpRelay({ host: server.hostname, port: Number(server.port || 5432) });
    // Only the sessions (the sweep's lock, LISTEN) go through the relay; requests use the pool directly.
    const sessions = new URL(withDatabase(adminUrl(), database));
    sessions.hostname = '127.0.0.1';
    sessions.port = String(relay.port);
    ctx = await createTestApp(
      {
        DATABASE_POOLER: 'none',
        DATABASE_DIRECT_URL: sessions.toString(),
        DATABASE_CONNECT_TIMEOUT_MS: '1000',
        DATABASE_QUERY_TIMEOUT_MS: '1000',
      },
      { databaseUrl: withDatabase(adminUrl(), database) },
    );
  });
  afterAll(async () => {
    await ctx?.close();
    await relay?.close();
    await dropTestDatabase(adminUrl(), database);
  });

  it('fails within the connect timeout instead of holding its job (and the shutdown) for ever, then sweeps again', async () => {
    const sweeper = ctx.app.get(FileSweeper);
    relay.blackhole();
    const started = Date.now();
    await expect(sweeper.sweep()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(ctx.config.database.connectTimeoutMs + 1_000);
    relay.resume();
    await expect(sweeper.sweep()).resolves.toMatchObject({ incomplete: 0 });
  });
});
