import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { S3_TEST_BUCKET, S3Server, startS3Server } from '../../test/fakes/s3-server';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { FileTooLargeError } from './file-storage';
import { s3Client, S3FileStorage } from './s3-file-storage';
import { S3_PART_SIZE } from './s3-object-upload';

const CHUNK_BYTES = 64 * 1024;

/** `content` as a client sends it: 64 KiB chunks, each in a Buffer of its own. */
const chunked = (content: Buffer): Readable =>
  Readable.from(
    (function* () {
      for (let offset = 0; offset < content.length; offset += CHUNK_BYTES) {
        yield Buffer.from(content.subarray(offset, offset + CHUNK_BYTES));
      }
    })(),
  );

describe('S3FileStorage against an S3-compatible server', () => {
  let server: S3Server;
  let storage: S3FileStorage;

  beforeAll(async () => {
    server = await startS3Server();
    const endpoint = server.env.S3_ENDPOINT;
    const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
    const client = s3Client({
      bucket: S3_TEST_BUCKET,
      region: 'us-east-1',
      endpoint,
      credentials,
      forcePathStyle: true,
    });
    storage = new S3FileStorage(client, S3_TEST_BUCKET);
  });
  afterAll(async () => {
    storage.onApplicationShutdown();
    await server.close();
  });

  const readBack = async (key: string): Promise<Buffer> => buffer(await storage.read(key));

  it.each([
    ['an empty file', 0],
    ['a small file', 1000],
    ['a file one byte under a part', S3_PART_SIZE - 1],
    ['a file of exactly one part', S3_PART_SIZE],
    ['a file one byte over a part', S3_PART_SIZE + 1],
    ['a file of exactly two parts', 2 * S3_PART_SIZE],
    ['a file of two parts and a bit', 2 * S3_PART_SIZE + 12_345],
  ])('stores %s (%d bytes) byte for byte', async (_name, bytes) => {
    const content = randomBytes(bytes);
    const stored = await storage.put(chunked(content), 3 * S3_PART_SIZE);
    expect(stored.sizeBytes).toBe(bytes);
    expect(await storage.sizeOf(stored.key)).toBe(bytes);
    expect((await readBack(stored.key)).equals(content)).toBe(true);
  });

  it('keeps concurrent uploads apart (each has its own part buffers)', async () => {
    const contents = [0, 1, 2].map(() => randomBytes(2 * S3_PART_SIZE + 777));
    const stored = await Promise.all(
      contents.map((content) => storage.put(chunked(content), 3 * S3_PART_SIZE)),
    );
    for (const [index, { key }] of stored.entries()) {
      expect((await readBack(key)).equals(contents[index])).toBe(true);
    }
  });

  it('fails a file over the limit with FileTooLargeError and stores nothing', async () => {
    const before = await storage.list(undefined, 1000);
    await expect(
      storage.put(chunked(randomBytes(S3_PART_SIZE + CHUNK_BYTES)), S3_PART_SIZE),
    ).rejects.toBeInstanceOf(FileTooLargeError);
    expect(await storage.list(undefined, 1000)).toEqual(before);
  });

  it("passes on the source's own failure in a later part and stores nothing", async () => {
    const before = await storage.list(undefined, 1000);
    const source = new PassThrough();
    const stored = storage.put(source, 3 * S3_PART_SIZE);
    source.write(randomBytes(S3_PART_SIZE + CHUNK_BYTES));
    setTimeout(() => source.destroy(new Error('client went away')), 50);
    await expect(stored).rejects.toThrow('client went away');
    expect(await storage.list(undefined, 1000)).toEqual(before);
  });

  it('answers 503 STORAGE_UNAVAILABLE while the store is down, and stores again once it is back', async () => {
    await server.stop();
    try {
      const failed = storage.put(chunked(randomBytes(S3_PART_SIZE + 1)), 3 * S3_PART_SIZE);
      await expect(failed).rejects.toBeInstanceOf(AppError);
      await expect(failed).rejects.toMatchObject({ code: ErrorCode.STORAGE_UNAVAILABLE });
    } finally {
      await server.start();
    }
    const content = randomBytes(S3_PART_SIZE + 1);
    const stored = await storage.put(chunked(content), 3 * S3_PART_SIZE);
    expect((await readBack(stored.key)).equals(content)).toBe(true);
  });
});
