import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useServiceProcesses } from '../utils/service-process';
import { createClassWithRoles, createTask } from '../utils/tasks';
import { backdate, filesBelow, startUpload, waitUntil } from '../utils/uploads';

const HOUR_MS = 60 * 60 * 1000;

/**
 * The service as a process of its own (ts-node, as the CLI tests run the CLI), killed with SIGKILL in the
 * middle of an upload and started again on the same database and DATA_DIR.
 */
describe('files after kill -9 during an upload', () => {
  const { ctx, start } = useServiceProcesses();

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
