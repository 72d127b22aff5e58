import { randomBytes } from 'node:crypto';
import { Agent } from 'node:https';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { multipartOperation, S3_TEST_BUCKET, S3Server, startS3Server } from '../../test/fakes/s3-server';
import { sleep, waitFor } from '../../test/utils/wait';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { FileTooLargeError } from './file-storage';
import { S3FileStorage } from './s3-file-storage';
import { S3_PART_SIZE } from './s3-object-upload';

const CHUNK_BYTES = 64 * 1024;

/** `content` as a client sends it: 64 KiB chunks, each in a Buffer of its own. */
function* chunksOf(content: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < content.length; offset += CHUNK_BYTES) {
    yield Buffer.from(content.subarray(offset, offset + CHUNK_BYTES));
  }
}
const chunked = (content: Buffer): Readable => Readable.from(chunksOf(content));

/**
 * A storage on `server`'s bucket that may hold `uploadMemoryBytes` of upload parts at once; over https it
 * trusts `server`'s certificate.
 */
const storageOn = (server: S3Server, uploadMemoryBytes = 64 * S3_PART_SIZE): S3FileStorage => {
  const config = {
    bucket: S3_TEST_BUCKET,
    region: 'us-east-1',
    endpoint: server.env.S3_ENDPOINT,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    uploadMemoryBytes,
  };
  const httpsAgent = server.certificate ? new Agent({ ca: server.certificate }) : undefined;
  return new S3FileStorage(config, httpsAgent);
};

describe('S3FileStorage against an S3-compatible server', () => {
  let server: S3Server;
  let storage: S3FileStorage;

  beforeAll(async () => {
    server = await startS3Server();
    storage = storageOn(server);
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

  describe('with room for two parts in the whole storage (S3_UPLOAD_MEMORY_MIB=10)', () => {
    let small: S3FileStorage;
    beforeAll(() => (small = storageOn(server, 2 * S3_PART_SIZE)));
    afterAll(() => small.onApplicationShutdown());
    const creates = (): number =>
      server.requests().filter((request) => multipartOperation(request) === 'CreateMultipartUpload').length;

    it('lets a second upload wait, its body unread, until the first gives its parts back', async () => {
      const first = new PassThrough();
      const contents = [randomBytes(2 * S3_PART_SIZE + 99), randomBytes(S3_PART_SIZE + 1)];
      let secondRead = 0;
      const second = Readable.from(
        (function* () {
          for (const chunk of chunksOf(contents[1])) {
            secondRead += chunk.length;
            yield chunk;
          }
        })(),
      );
      const before = creates();
      const firstStored = small.put(first, 3 * S3_PART_SIZE);
      first.write(contents[0].subarray(0, S3_PART_SIZE + CHUNK_BYTES));
      await waitFor('the first upload to start', async () => creates() === before + 1);
      const secondStored = small.put(second, 3 * S3_PART_SIZE);
      await sleep(200);
      expect(creates()).toBe(before + 1);
      // Only what the streams in front of the upload buffer (tens of KiB) was taken from the second body.
      expect(secondRead).toBeLessThan(1024 * 1024);

      first.end(contents[0].subarray(S3_PART_SIZE + CHUNK_BYTES));
      const stored = await Promise.all([firstStored, secondStored]);
      expect(creates()).toBe(before + 2);
      for (const [index, { key }] of stored.entries()) {
        expect((await buffer(await small.read(key))).equals(contents[index])).toBe(true);
      }
    });
  });

  it.each([
    ['two parts and a bit', 2 * S3_PART_SIZE + 5],
    ['exactly two parts', 2 * S3_PART_SIZE],
  ])('stores %s with room for one part only: reads and sends in turn', async (_name, bytes) => {
    const single = storageOn(server, S3_PART_SIZE);
    try {
      const content = randomBytes(bytes);
      const { key } = await single.put(chunked(content), 3 * S3_PART_SIZE);
      expect((await buffer(await single.read(key))).equals(content)).toBe(true);
    } finally {
      single.onApplicationShutdown();
    }
  });
});

describe('S3FileStorage payload signing', () => {
  it.each([
    ['plain http: the signature covers each body (its SHA-256)', false, /^[0-9a-f]{64}$/],
    ['https: bodies are not hashed into the signature', true, /^UNSIGNED-PAYLOAD$/],
  ])('%s', async (_name, tls, payloadHash) => {
    const server = await startS3Server({ tls });
    const storage = storageOn(server);
    try {
      const content = randomBytes(S3_PART_SIZE + 1);
      const { key } = await storage.put(chunked(content), 3 * S3_PART_SIZE);
      expect((await buffer(await storage.read(key))).equals(content)).toBe(true);
      const parts = server.requests().filter((request) => multipartOperation(request) === 'UploadPart');
      expect(parts).toHaveLength(2);
      for (const part of parts) expect(part.payloadHash).toMatch(payloadHash);
    } finally {
      storage.onApplicationShutdown();
      await server.close();
    }
  });
});

describe('S3FileStorage with a store without ListMultipartUploads', () => {
  it('finds no incomplete uploads to remove (the bucket lifecycle rule aborts them) rather than failing', async () => {
    const server = await startS3Server({ listsUploads: false });
    const storage = storageOn(server);
    try {
      expect(await storage.removeIncomplete(new Date(), 100)).toBe(0);
      const listings = server
        .requests()
        .filter((request) => multipartOperation(request) === 'ListMultipartUploads');
      expect(listings.map((request) => request.status)).toEqual([501]);
    } finally {
      storage.onApplicationShutdown();
      await server.close();
    }
  });
});
