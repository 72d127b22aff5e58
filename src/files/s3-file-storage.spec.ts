import {
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:https';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { crc32 } from 'node:zlib';
import { multipartOperation, S3_TEST_BUCKET, S3Server, startS3Server } from '../../test/fakes/s3-server';
import { sleep, waitFor } from '../../test/utils/wait';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { S3_PART_SIZE, S3StorageConfig } from '../config/files.config';
import { FileTooLargeError, newFileKey } from './file-storage';
import { s3Client, S3FileStorage } from './s3-file-storage';
import { PartBuffers, uploadObject } from './s3-object-upload';

const CHUNK_BYTES = 64 * 1024;

/** `content` as a client sends it: 64 KiB chunks, each in a Buffer of its own. */
function* chunksOf(content: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < content.length; offset += CHUNK_BYTES) {
    yield Buffer.from(content.subarray(offset, offset + CHUNK_BYTES));
  }
}
const chunked = (content: Buffer): Readable => Readable.from(chunksOf(content));

/** The settings of a storage on `server`'s bucket. */
const s3Config = (
  server: S3Server,
  uploadMemoryBytes = 64 * S3_PART_SIZE,
  keyPrefix = '',
): S3StorageConfig => ({
  bucket: S3_TEST_BUCKET,
  region: 'us-east-1',
  endpoint: server.env.S3_ENDPOINT,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  forcePathStyle: true,
  uploadMemoryBytes,
  keyPrefix,
});

/**
 * A storage on `server`'s bucket that may hold `uploadMemoryBytes` of upload parts at once; over https it
 * trusts `server`'s certificate.
 */
const storageOn = (server: S3Server, uploadMemoryBytes = 64 * S3_PART_SIZE): S3FileStorage => {
  const httpsAgent = server.certificate ? new Agent({ ca: server.certificate }) : undefined;
  return new S3FileStorage(s3Config(server, uploadMemoryBytes), httpsAgent);
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

  /** The multipart operations the server answered since `since` requests, with their status. */
  const operationsSince = (since: number): string[] =>
    server
      .requests()
      .slice(since)
      .map((request) => [multipartOperation(request), request.status].join(' '))
      .filter((operation) => !operation.startsWith(' '));
  /** How many incomplete multipart uploads the server holds. */
  const incompleteUploads = async (): Promise<number> => {
    const client = s3Client(s3Config(server));
    try {
      const { Uploads } = await client.send(new ListMultipartUploadsCommand({ Bucket: S3_TEST_BUCKET }));
      return Uploads?.length ?? 0;
    } finally {
      client.destroy();
    }
  };

  it('fails a file over the limit with FileTooLargeError, aborts its multipart upload and stores nothing', async () => {
    const before = await storage.list(undefined, 1000);
    const since = server.requests().length;
    await expect(
      storage.put(chunked(randomBytes(S3_PART_SIZE + CHUNK_BYTES)), S3_PART_SIZE),
    ).rejects.toBeInstanceOf(FileTooLargeError);
    expect(await storage.list(undefined, 1000)).toEqual(before);
    // The first part was sent while the rest was read.
    expect(operationsSince(since)).toEqual([
      'CreateMultipartUpload 200',
      'UploadPart 200',
      'AbortMultipartUpload 204',
    ]);
    expect(await incompleteUploads()).toBe(0);
  });

  it("passes on the source's own failure in a later part, aborts its multipart upload and stores nothing", async () => {
    const before = await storage.list(undefined, 1000);
    const since = server.requests().length;
    const source = new PassThrough();
    const stored = storage.put(source, 3 * S3_PART_SIZE);
    source.write(randomBytes(S3_PART_SIZE + CHUNK_BYTES));
    setTimeout(() => source.destroy(new Error('client went away')), 50);
    await expect(stored).rejects.toThrow('client went away');
    expect(await storage.list(undefined, 1000)).toEqual(before);
    expect(operationsSince(since)).toEqual([
      'CreateMultipartUpload 200',
      'UploadPart 200',
      'AbortMultipartUpload 204',
    ]);
    expect(await incompleteUploads()).toBe(0);
  });

  it("sends the CRC32 of every part and of a single-request object, and the parts' at completion", async () => {
    const crc32Of = (bytes: Buffer): string => {
      const digest = Buffer.alloc(4);
      digest.writeUInt32BE(crc32(bytes));
      return digest.toString('base64');
    };
    const checksumsSince = (since: number, operation: string): (string | undefined)[] =>
      server
        .requests()
        .slice(since)
        .filter((request) => multipartOperation(request) === operation)
        .map((request) => request.checksumCrc32);

    const large = randomBytes(2 * S3_PART_SIZE + 12_345);
    let since = server.requests().length;
    const { key } = await storage.put(chunked(large), 3 * S3_PART_SIZE);
    expect(checksumsSince(since, 'UploadPart')).toEqual([
      crc32Of(large.subarray(0, S3_PART_SIZE)),
      crc32Of(large.subarray(S3_PART_SIZE, 2 * S3_PART_SIZE)),
      crc32Of(large.subarray(2 * S3_PART_SIZE)),
    ]);
    expect((await readBack(key)).equals(large)).toBe(true);

    const small = randomBytes(1000);
    since = server.requests().length;
    await storage.put(chunked(small), 3 * S3_PART_SIZE);
    const puts = server
      .requests()
      .slice(since)
      .filter((request) => request.method === 'PUT');
    expect(puts.map((request) => request.checksumCrc32)).toEqual([crc32Of(small)]);
  });

  it('fails a source longer than the most parts a multipart upload takes before sending the part over, and aborts', async () => {
    const client = s3Client(s3Config(server));
    try {
      const since = server.requests().length;
      const target = { bucket: S3_TEST_BUCKET, key: 'too-many-parts' };
      const upload = uploadObject(
        client,
        new PartBuffers(2),
        target,
        chunked(randomBytes(2 * S3_PART_SIZE + 1)),
        2,
      );
      await expect(upload).rejects.toBeInstanceOf(FileTooLargeError);
      expect(operationsSince(since)).toEqual([
        'CreateMultipartUpload 200',
        'UploadPart 200',
        'UploadPart 200',
        'AbortMultipartUpload 204',
      ]);
      expect(await incompleteUploads()).toBe(0);
    } finally {
      client.destroy();
    }
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

  it('lets an upload waiting for a part buffer whose client left give up its place at once', async () => {
    const single = storageOn(server, S3_PART_SIZE);
    try {
      const first = new PassThrough();
      const content = randomBytes(S3_PART_SIZE + 1);
      const firstStored = single.put(first, 3 * S3_PART_SIZE);
      first.write(content.subarray(0, CHUNK_BYTES));
      const left = new PassThrough();
      const leftStored = single.put(left, 3 * S3_PART_SIZE);
      left.write(randomBytes(CHUNK_BYTES));
      await sleep(100);
      left.destroy(new Error('client went away'));
      // It fails while the first upload still holds the only buffer, not once that is given back.
      await expect(leftStored).rejects.toThrow('client went away');
      first.end(content.subarray(CHUNK_BYTES));
      const { key } = await firstStored;
      expect((await buffer(await single.read(key))).equals(content)).toBe(true);
      // The buffer went back to the storage, not to the upload that left: the next one takes it.
      const next = randomBytes(1000);
      const stored = await single.put(chunked(next), 3 * S3_PART_SIZE);
      expect((await buffer(await single.read(stored.key))).equals(next)).toBe(true);
    } finally {
      single.onApplicationShutdown();
    }
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

describe('S3FileStorage in a bucket shared with other writers (S3_KEY_PREFIX)', () => {
  let server: S3Server;
  let client: S3Client;
  let storage: S3FileStorage;
  const PREFIX = 'classroom/';

  beforeAll(async () => {
    // Two uploads per listing page: the sweep must go through every page.
    server = await startS3Server({ uploadsPageMax: 2 });
    client = s3Client(s3Config(server));
    storage = new S3FileStorage(s3Config(server, S3_PART_SIZE, PREFIX));
  });
  afterAll(async () => {
    storage.onApplicationShutdown();
    client.destroy();
    await server.close();
  });

  const startUploadOf = async (key: string): Promise<string> => {
    const { UploadId } = await client.send(
      new CreateMultipartUploadCommand({ Bucket: S3_TEST_BUCKET, Key: key }),
    );
    return UploadId!;
  };
  /** Every incomplete upload's key, page after page. */
  const incompleteKeys = async (): Promise<string[]> => {
    const keys: string[] = [];
    let markers = {};
    for (;;) {
      const page = await client.send(new ListMultipartUploadsCommand({ Bucket: S3_TEST_BUCKET, ...markers }));
      keys.push(...(page.Uploads ?? []).map((upload) => upload.Key!));
      if (!page.IsTruncated) return keys;
      markers = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
    }
  };

  it('stores, lists and reads its files under the prefix', async () => {
    const content = randomBytes(1000);
    const { key } = await storage.put(chunked(content), S3_PART_SIZE);
    await client.send(
      new PutObjectCommand({ Bucket: S3_TEST_BUCKET, Key: newFileKey(), Body: 'another writer' }),
    );
    const head = await client.send(new HeadObjectCommand({ Bucket: S3_TEST_BUCKET, Key: `${PREFIX}${key}` }));
    expect(head.ContentLength).toBe(1000);
    expect((await storage.list(undefined, 1000)).map((object) => object.key)).toEqual([key]);
    expect(await storage.sizeOf(key)).toBe(1000);
    expect((await buffer(await storage.read(key))).equals(content)).toBe(true);
    await storage.remove([key]);
    expect(await storage.list(undefined, 1000)).toEqual([]);
  });

  it('aborts only its own stale multipart uploads, over every page of the listing', async () => {
    const own = [newFileKey(), newFileKey(), newFileKey()].map((key) => `${PREFIX}${key}`);
    const foreign = [`other-app/${newFileKey()}`, newFileKey(), `${PREFIX}backups/db.tar`];
    for (const key of [...own, ...foreign]) await startUploadOf(key);
    server.ageUploads(2 * 60 * 60 * 1000);
    const recent = `${PREFIX}${newFileKey()}`;
    await startUploadOf(recent);
    const listingsSince = (since: number) =>
      server
        .requests()
        .slice(since)
        .filter((request) => multipartOperation(request) === 'ListMultipartUploads');

    const first = server.requests().length;
    expect(await storage.removeIncomplete(new Date(Date.now() - 60 * 60 * 1000), 2)).toBe(2);
    const second = server.requests().length;
    expect(await storage.removeIncomplete(new Date(Date.now() - 60 * 60 * 1000), 100)).toBe(1);
    // Only the prefix was listed. How many pages the first sweep needed depends on where its two stale
    // uploads fall in key order (random keys); the second lists the 3 uploads left under the prefix, 2 a
    // page: exactly two pages, the second one after a marker.
    expect(listingsSince(first).every((request) => request.query.prefix === PREFIX)).toBe(true);
    const pages = listingsSince(second);
    expect(pages).toHaveLength(2);
    expect(pages[1].query['key-marker']).toBeDefined();
    expect((await incompleteKeys()).sort()).toEqual([...foreign, recent].sort());
  });
});
