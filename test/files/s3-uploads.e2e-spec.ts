import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { FileSweeper } from '../../src/files/file-sweeper';
import { multipartOperation, S3_TEST_BUCKET, S3Request, S3Server, useStorageEnv } from '../fakes/s3-server';
import { apiError } from '../utils/expect';
import { downloadFile, listStoredKeys } from '../utils/files';
import { ClassWithRoles, createClassWithRoles, createTask } from '../utils/tasks';
import { useTestApp } from '../utils/test-app';
import { startUpload } from '../utils/uploads';
import { waitFor } from '../utils/wait';

const MiB = 1024 * 1024;
const FILE_BYTES = 12 * MiB;
const HOUR_MS = 60 * 60 * 1000;

/**
 * Uploads larger than one part (5 MiB) go to S3 as multipart uploads: what is left in the
 * bucket, the database and the quota when the client or the store goes away in the middle of one, and how
 * the sweep aborts the multipart uploads a crash left behind.
 */
describe('multipart uploads to S3: dropped clients, a store going away, the sweep', () => {
  // Room for two 5 MiB parts in the whole instance: one upload at a time reads ahead, the others wait.
  const storage = useStorageEnv('s3', { UPLOAD_MAX_BYTES: String(16 * MiB), S3_UPLOAD_MEMORY_MIB: '10' });
  const ctx = useTestApp(storage.env);
  const s3 = (): S3Server => storage.s3()!;
  let client: S3Client;
  let cls: ClassWithRoles;
  let taskId: string;
  let uploadUrl: string;

  const requestsSince = (since: number): S3Request[] => s3().requests().slice(since);
  /** The operations of uploads (not listings) the store answered since `since` requests, with their status. */
  const uploadOperationsSince = (since: number): string[] =>
    requestsSince(since)
      .map((request) => [multipartOperation(request), request.status].join(' '))
      .filter((operation) => /^(Create|Upload|Complete|Abort)/.test(operation));
  /** The upload ids of AbortMultipartUpload requests since `since`, with their status. */
  const abortsSince = (since: number): [string, number | null][] =>
    requestsSince(since)
      .filter((request) => multipartOperation(request) === 'AbortMultipartUpload')
      .map((request) => [request.query.uploadId, request.status]);
  /** The multipart upload (key and id) whose first part the store has stored since `since`, once it has. */
  const firstPartStored = (since: number): Promise<{ key: string; uploadId: string }> =>
    waitFor('the first part in the store', async () => {
      const part = requestsSince(since).find(
        (request) =>
          multipartOperation(request) === 'UploadPart' &&
          request.query.partNumber === '1' &&
          request.status === 200,
      );
      return part && { key: part.path.split('/').pop()!, uploadId: part.query.uploadId };
    });
  /** A MEMBER downloads exactly `content` from the attachment, then the OWNER deletes it. */
  const expectServedThenDeleted = async (attachment: { id: string; url: string }, content: Buffer) => {
    const file = await downloadFile(ctx, attachment.url, cls.member);
    expect(file.status).toBe(200);
    expect(Buffer.compare(file.body as Buffer, content)).toBe(0);
    await ctx.http
      .delete(`/tasks/${taskId}/attachments/${attachment.id}`)
      .set('Authorization', cls.owner.auth)
      .expect(204);
  };
  const incompleteUploads = async (): Promise<{ key?: string; uploadId?: string }[]> =>
    ((await client.send(new ListMultipartUploadsCommand({ Bucket: S3_TEST_BUCKET }))).Uploads ?? []).map(
      ({ Key, UploadId }) => ({ key: Key, uploadId: UploadId }),
    );
  const attachmentRows = async (): Promise<number> =>
    (await ctx.db.query(`SELECT count(*)::int AS n FROM task_attachments WHERE task_id = $1`, [taskId]))[0].n;
  const reservations = async (): Promise<number> =>
    (await ctx.db.query(`SELECT count(*)::int AS n FROM storage_reservations`))[0].n;
  /** Polls until nothing of an upload is left: no row, object, incomplete upload or quota reservation. */
  const nothingLeft = (): Promise<boolean> =>
    waitFor(
      'the upload to leave nothing behind',
      async () =>
        (await attachmentRows()) === 0 &&
        (await reservations()) === 0 &&
        (await incompleteUploads()).length === 0 &&
        (await listStoredKeys(ctx)).length === 0,
      5_000,
    );

  beforeAll(async () => {
    const { env } = s3();
    client = new S3Client({
      region: env.S3_REGION,
      endpoint: env.S3_ENDPOINT,
      forcePathStyle: true,
      credentials: { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY },
    });
    cls = await createClassWithRoles(ctx);
    taskId = (await createTask(ctx, cls.classId, cls.owner)).id;
    const server = ctx.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    uploadUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tasks/${taskId}/attachments`;
  });
  // Each test starts without incomplete uploads, whatever the one before it left.
  afterEach(async () => {
    for (const { key, uploadId } of await incompleteUploads()) {
      await client.send(
        new AbortMultipartUploadCommand({ Bucket: S3_TEST_BUCKET, Key: key, UploadId: uploadId }),
      );
    }
  });
  afterAll(() => client?.destroy());

  it('stores a 12 MiB file as a three-part multipart upload and serves the same bytes back', async () => {
    const content = randomBytes(FILE_BYTES);
    const since = s3().requests().length;
    const res = await ctx.http
      .post(`/tasks/${taskId}/attachments`)
      .set('Authorization', cls.owner.auth)
      .attach('file', content, { filename: 'big.bin', contentType: 'application/octet-stream' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ sizeBytes: FILE_BYTES });
    expect(uploadOperationsSince(since)).toEqual([
      'CreateMultipartUpload 200',
      'UploadPart 200',
      'UploadPart 200',
      'UploadPart 200',
      'CompleteMultipartUpload 200',
    ]);

    await expectServedThenDeleted(res.body, content);
    expect(await listStoredKeys(ctx)).toEqual([]);
  });

  it('takes concurrent large uploads in turn when the part memory of the instance is taken', async () => {
    const contents = Array.from({ length: 4 }, () => randomBytes(7 * MiB));
    const uploaders = [cls.owner, cls.admin, cls.owner, cls.admin];
    const answers = await Promise.all(
      contents.map((content, i) =>
        ctx.http
          .post(`/tasks/${taskId}/attachments`)
          .set('Authorization', uploaders[i].auth)
          .attach('file', content, { filename: `part-${i}.bin`, contentType: 'application/octet-stream' }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual([201, 201, 201, 201]);
    for (const [i, res] of answers.entries()) await expectServedThenDeleted(res.body, contents[i]);
    expect(await listStoredKeys(ctx)).toEqual([]);
  });

  it('aborts the multipart upload of a client that drops its connection after 8 of 12 MiB', async () => {
    const content = randomBytes(FILE_BYTES);
    const since = s3().requests().length;
    const upload = startUpload(uploadUrl, cls.owner.auth, content.subarray(0, 8 * MiB), FILE_BYTES);
    const { key, uploadId } = await firstPartStored(since);
    expect(await incompleteUploads()).toEqual([{ key, uploadId }]);
    expect(await reservations()).toBe(1);
    upload.abort();
    await upload.closed;

    await nothingLeft();
    // 3 MiB of a second part had come: not enough to send it.
    expect(uploadOperationsSince(since)).toEqual([
      'CreateMultipartUpload 200',
      'UploadPart 200',
      'AbortMultipartUpload 204',
    ]);
    expect(abortsSince(since)).toEqual([[uploadId, 204]]);

    // The service goes on: the same user's next upload is stored.
    const next = await ctx.http
      .post(`/tasks/${taskId}/attachments`)
      .set('Authorization', cls.owner.auth)
      .attach('file', Buffer.from('after the drop'), { filename: 'small.txt', contentType: 'text/plain' });
    expect(next.status).toBe(201);
    await ctx.http
      .delete(`/tasks/${taskId}/attachments/${next.body.id}`)
      .set('Authorization', cls.owner.auth)
      .expect(204);
  });

  it('answers 503 STORAGE_UNAVAILABLE when the store goes away mid-upload; the sweep aborts what it left', async () => {
    const content = randomBytes(FILE_BYTES);
    const since = s3().requests().length;
    const upload = startUpload(uploadUrl, cls.owner.auth, content.subarray(0, 6 * MiB), FILE_BYTES);
    const { key, uploadId } = await firstPartStored(since);
    await s3().stop();
    let answer: { status: number; body: unknown };
    try {
      answer = await upload.finish(content.subarray(6 * MiB));
    } finally {
      upload.abort();
      await s3().start();
    }

    expect(answer).toEqual({ status: 503, body: apiError('STORAGE_UNAVAILABLE') });
    expect(await attachmentRows()).toBe(0);
    expect(await reservations()).toBe(0);
    expect(await listStoredKeys(ctx)).toEqual([]);
    // Its abort could not reach the store either: the multipart upload stays for the sweep.
    expect(uploadOperationsSince(since)).toEqual(['CreateMultipartUpload 200', 'UploadPart 200']);
    expect(await incompleteUploads()).toEqual([{ key, uploadId }]);
    s3().ageUploads(2 * HOUR_MS);
    const sweptSince = s3().requests().length;
    expect(await ctx.app.get(FileSweeper).sweep()).toMatchObject({ incomplete: 1 });
    expect(abortsSince(sweptSince)).toEqual([[uploadId, 204]]);
    expect(await incompleteUploads()).toEqual([]);
  });

  it('sweeps multipart uploads older than the grace period away and keeps a recent one', async () => {
    const startUploadOf = async (key: string): Promise<string> => {
      const { UploadId } = await client.send(
        new CreateMultipartUploadCommand({ Bucket: S3_TEST_BUCKET, Key: key }),
      );
      await client.send(
        new UploadPartCommand({
          Bucket: S3_TEST_BUCKET,
          Key: key,
          UploadId,
          PartNumber: 1,
          Body: 'part one',
        }),
      );
      return UploadId!;
    };
    const stale = await startUploadOf('stale-upload-of-a-crash');
    s3().ageUploads(2 * HOUR_MS);
    const recent = await startUploadOf('upload-in-flight');
    const since = s3().requests().length;

    expect(await ctx.app.get(FileSweeper).sweep()).toMatchObject({ incomplete: 1 });
    expect(await incompleteUploads()).toEqual([{ key: 'upload-in-flight', uploadId: recent }]);
    expect(abortsSince(since)).toEqual([[stale, 204]]);
  });
});
