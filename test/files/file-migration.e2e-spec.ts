import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { filesConfig, S3StorageConfig } from '../../src/config/files.config';
import { migrateLocalFiles } from '../../src/files/file-migration';
import { LocalFileStorage } from '../../src/files/local-file-storage';
import { S3FileStorage } from '../../src/files/s3-file-storage';
import { useStorageEnv } from '../fakes/s3-server';
import { runCli } from '../utils/cli';
import { useTestApp } from '../utils/test-app';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `npm run cli -- files:migrate`: local files into the bucket, idempotent and resumable. */
describe('files:migrate', () => {
  jest.setTimeout(120_000);
  // The app stores locally; the CLI and the checks below reach the bucket with the S3 settings.
  const ctx = useTestApp();
  const storage = useStorageEnv('s3');
  const s3Env = storage.env;
  const s3Settings = (): S3StorageConfig => {
    const { fileStorage } = filesConfig(s3Env);
    if (fileStorage.driver !== 's3') throw new Error('the S3 server is not started');
    return fileStorage.s3;
  };
  const bucket = (): S3FileStorage => new S3FileStorage(s3Settings());

  it('copies every local file under its own key, skips what is there, and re-copies what differs', async () => {
    const local = new LocalFileStorage(join(ctx.dataDir, 'files'));
    const contents = [randomBytes(10), randomBytes(7 * 1024 * 1024), randomBytes(1)];
    const keys = [];
    for (const content of contents) keys.push((await local.put(Readable.from([content]), 1e9)).key);
    const config = { ...ctx.config, fileStorage: { driver: 's3' as const, s3: s3Settings() } };
    const lines: string[] = [];

    expect(await migrateLocalFiles(config, (line) => lines.push(line))).toEqual({
      copied: 3,
      skipped: 0,
      copiedBytes: 10 + 7 * 1024 * 1024 + 1,
    });
    expect(lines).toEqual([expect.stringMatching(/^files:migrate: 3 copied, 0 already there, last key /)]);
    const target = bucket();
    for (const [i, key] of keys.entries()) {
      expect(Buffer.compare(await readAll(await target.read(key)), contents[i])).toBe(0);
    }

    // A run stopped half-way left one object short: only that one is copied again.
    await target.write(keys[0], Readable.from([Buffer.from('cut')]));
    expect(await migrateLocalFiles(config, () => undefined)).toEqual({
      copied: 1,
      skipped: 2,
      copiedBytes: 10,
    });
    expect(Buffer.compare(await readAll(await target.read(keys[0])), contents[0])).toBe(0);
    target.onApplicationShutdown();
  });

  it('runs as the operator CLI command, progress on stderr and the counts as JSON on stdout', async () => {
    const { code, stdout, stderr } = await runCli(ctx, s3Env, 'files:migrate');
    expect({ code, stderr }).toMatchObject({ code: 0, stderr: expect.stringContaining('3 already there') });
    expect(JSON.parse(stdout)).toEqual({ copied: 0, skipped: 3, copiedBytes: 0 });

    const local = await runCli(ctx, {}, 'files:migrate');
    expect(local.code).toBe(1);
    expect(local.stderr).toContain('set FILE_STORAGE=s3');
  });
});
