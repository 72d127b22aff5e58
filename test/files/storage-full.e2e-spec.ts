import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { apiError } from '../utils/expect';
import { loggedBy } from '../utils/relayed-app';
import { createClassWithRoles, createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';

/** The file storage's disk: a real filesystem this small, so that an upload fills it (ENOSPC). */
const DISK_BYTES = 256 * 1024;

/**
 * A data folder whose `files` is a tiny tmpfs, or why it cannot be had (mounting needs CAP_SYS_ADMIN; CI runs
 * as root and `.ci/run` checks that it can mount one).
 */
function dataDirOnTinyDisk(): { dataDir: string } | { refused: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'cts-full-'));
  mkdirSync(join(dataDir, 'files'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_BYTES}`, 'tmpfs', join(dataDir, 'files')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return { dataDir };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    return { refused: String((error as { stderr?: Buffer }).stderr ?? error).trim() };
  }
}

const tinyDisk = dataDirOnTinyDisk();
// Elsewhere a machine without the capability skips it; under CI=true the 507 path must run, so it fails.
const runsHere = 'dataDir' in tinyDisk || process.env.CI === 'true';
if (!runsHere) console.warn('storage-full: cannot mount a tmpfs here, the disk-full test is skipped');

(runsHere ? describe : describe.skip)('local file storage on a full disk', () => {
  let ctx: TestApp;
  let dataDir: string;
  beforeAll(async () => {
    if (!('dataDir' in tinyDisk))
      throw new Error(`cannot mount a tmpfs for the full disk: ${tinyDisk.refused}`);
    dataDir = tinyDisk.dataDir;
    ctx = await createTestApp({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    if (!dataDir) return;
    jest.restoreAllMocks();
    await ctx.close();
    execFileSync('umount', [join(dataDir, 'files')]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 507 INSUFFICIENT_STORAGE, warns once, and keeps nothing of the upload', async () => {
    const cls = await createClassWithRoles(ctx);
    const task = await createTask(ctx, cls.classId, cls.owner);
    const upload = (bytes: number) =>
      ctx.http
        .post(`/tasks/${task.id}/attachments`)
        .set('Authorization', cls.owner.auth)
        .attach('file', randomBytes(bytes), { filename: 'scan.pdf', contentType: 'application/pdf' });
    const warned = jest.spyOn(Logger.prototype, 'warn');
    const failed = jest.spyOn(Logger.prototype, 'error');

    for (let attempt = 0; attempt < 3; attempt += 1) {
      const refused = await upload(2 * DISK_BYTES);
      expect(refused.status).toBe(507);
      expect(refused.body).toEqual(apiError('INSUFFICIENT_STORAGE'));
    }
    expect(loggedBy(warned, 'ExceptionFilter')).toHaveLength(1);
    expect(failed).not.toHaveBeenCalled();
    // Nothing partial kept: no file, no incomplete upload, no row, no quota reservation.
    const root = join(dataDir, 'files');
    expect(readdirSync(root).flatMap((folder) => readdirSync(join(root, folder)))).toEqual([]);
    const [{ attachments, reservations }] = await ctx.db.query(
      `SELECT (SELECT count(*)::int FROM task_attachments) AS attachments,
              (SELECT count(*)::int FROM storage_reservations) AS reservations`,
    );
    expect({ attachments, reservations }).toEqual({ attachments: 0, reservations: 0 });

    // The room the refused uploads took is free again.
    await upload(DISK_BYTES / 4).expect(201);
  });
});
