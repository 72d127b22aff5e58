import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../utils/free-port';
import { createClassWithRoles, createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';
import { backdate, filesBelow, startUpload, waitUntil } from '../utils/uploads';

const ROOT = join(__dirname, '..', '..');
const HOUR_MS = 60 * 60 * 1000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Service {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<Exit>;
}

/**
 * The service as a process of its own (ts-node, as the CLI tests run the CLI), killed with SIGKILL in the
 * middle of an upload and started again on the same database and DATA_DIR.
 */
describe('files after kill -9 during an upload', () => {
  // Two starts of the whole service through ts-node take a while on a busy machine.
  jest.setTimeout(300_000);

  let ctx: TestApp;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => {
    for (const child of started)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await ctx.close();
  });

  async function start(): Promise<Service> {
    const port = await freePort();
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        JWT_SECRET: ctx.config.jwt.secret,
        DATABASE_URL: ctx.databaseUrl,
        DATA_DIR: ctx.dataDir,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<Exit>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const deadline = Date.now() + 240_000;
    while (child.exitCode === null && Date.now() < deadline) {
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
      if (res?.status === 200) return { child, port, output: () => output, exited };
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    child.kill('SIGKILL');
    throw new Error(`The service did not become healthy:\n${output}`);
  }

  it('removes the partial file at restart; every row keeps its file and no file is left without a row', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    const root = join(ctx.dataDir, 'files');

    const first = await start();
    const url = `http://127.0.0.1:${first.port}/tasks/${task.id}/attachments`;
    const kept = await startUpload(url, cls.owner.auth, Buffer.from('kept ')).finish(Buffer.from('through'));
    expect(kept.status).toBe(201);
    const keptKey = (kept.body as { fileKey: string }).fileKey;
    const earlier = new Set(filesBelow(root));
    const cut = startUpload(url, cls.owner.auth, randomBytes(256 * 1024));
    const partial = await waitUntil(
      () => filesBelow(root).find((path) => !earlier.has(path) && statSync(join(root, path)).size > 0),
      'the upload on disk',
      60_000,
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await cut.closed;
    expect(existsSync(join(root, partial))).toBe(true);
    // A crash between storing a file and committing its row leaves a file that no row names.
    const unnamed = randomBytes(24).toString('base64url');
    mkdirSync(join(root, unnamed.slice(0, 2)), { recursive: true });
    writeFileSync(join(root, unnamed.slice(0, 2), unnamed), 'no row');
    // Back an hour later: the sweep spares the last hour (uploads in flight on other instances).
    for (const path of filesBelow(root)) backdate(join(root, path), 2 * HOUR_MS);

    const second = await start();
    try {
      const rows = await ctx.db.query<{ file_key: string }[]>(
        `SELECT file_key FROM task_attachments UNION ALL SELECT file_key FROM submission_attachments`,
      );
      expect(rows.map((row) => row.file_key)).toEqual([keptKey]);
      expect(filesBelow(root)).toEqual([join(keptKey.slice(0, 2), keptKey)]);
      const swept = second
        .output()
        .split('\n')
        .filter((line) => line.includes('Swept the file storage'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(swept).toEqual([expect.objectContaining({ incomplete: 1, orphans: 1 })]);

      const download = await fetch(`http://127.0.0.1:${second.port}/files/${keptKey}`, {
        headers: { Authorization: cls.owner.auth },
      });
      expect(download.status).toBe(200);
      expect(await download.text()).toBe('kept through');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
