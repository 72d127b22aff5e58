import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { beforeAllTests } from '../utils/test-app';

export const S3_TEST_BUCKET = 'cts-files';

export interface S3Server {
  /** FILE_STORAGE=s3 and the S3_* settings of a service using this server. */
  env: Record<string, string>;
  /** Stops answering (connections refused) until `start`; objects are kept. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A real S3-compatible server (s3rver) on a random port of 127.0.0.1, with one empty bucket. */
export async function startS3Server(): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'cts-s3-'));
  const s3 = new S3rver({
    silent: true,
    directory,
    configureBuckets: [{ name: S3_TEST_BUCKET, configs: [] }],
  });
  await s3.configureBuckets();
  let server: Server | null = null;
  let port = 0;
  const start = async (): Promise<void> => {
    const listening = createServer(s3.callback());
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
    port = (listening.address() as AddressInfo).port;
    server = listening;
  };
  const stop = async (): Promise<void> => {
    const running = server;
    server = null;
    if (!running) return;
    running.closeAllConnections();
    await new Promise((resolve) => running.close(resolve));
  };
  await start();
  return {
    env: {
      FILE_STORAGE: 's3',
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_REGION: 'us-east-1',
      S3_BUCKET: S3_TEST_BUCKET,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export type StorageDriver = 'local' | 's3';
/** The drivers a file suite runs over: every file endpoint answers the same with either (CONTRACT §5.8). */
export const STORAGE_DRIVERS: StorageDriver[] = ['local', 's3'];

/**
 * The environment of a test app storing with `driver`, on top of `env`. For s3 it fills in, before the tests
 * of the enclosing describe, the settings of an S3 server started for them: call it before `useTestApp`.
 */
export function useStorageEnv(
  driver: StorageDriver,
  env: Record<string, string> = {},
): { env: Record<string, string>; s3: () => S3Server | undefined } {
  const merged = { ...env };
  if (driver === 'local') return { env: merged, s3: () => undefined };
  const s3 = beforeAllTests(async () => {
    const server = await startS3Server();
    Object.assign(merged, server.env);
    return server;
  });
  return { env: merged, s3 };
}
