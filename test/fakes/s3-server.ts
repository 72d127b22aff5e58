import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer, IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { beforeAllTests } from '../utils/test-app';

export const S3_TEST_BUCKET = 'cts-files';

/** A request the server received: `query` holds its parameters (`uploads` and the like with ''). */
export interface S3Request {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The status answered; null when the connection closed first. */
  status: number | null;
  /** Its `x-amz-content-sha256`: the body's SHA-256 hex when the signature covers it, else UNSIGNED-PAYLOAD. */
  payloadHash: string | undefined;
  /** Its `x-amz-checksum-crc32`: the CRC32 of the body the client computed (base64), when it sent one. */
  checksumCrc32: string | undefined;
}

/** The multipart operation `request` is, by the REST API's method and query (null for any other). */
export function multipartOperation({ method, query }: S3Request): string | null {
  if ('uploads' in query) return method === 'POST' ? 'CreateMultipartUpload' : 'ListMultipartUploads';
  if (!('uploadId' in query)) return null;
  const operations: Record<string, string> = {
    PUT: 'UploadPart',
    POST: 'CompleteMultipartUpload',
    DELETE: 'AbortMultipartUpload',
    GET: 'ListParts',
  };
  return operations[method] ?? null;
}

export interface S3Server {
  /** FILE_STORAGE=s3 and the S3_* settings of a service using this server. */
  env: Record<string, string>;
  /** Stops answering (connections refused) until `start`; objects are kept. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
  /** With `tls`: the server's self-signed certificate, for clients to trust. */
  certificate: Buffer | null;
  /** Every request answered (or dropped) so far, in that order. */
  requests(): S3Request[];
  /** Moves the Initiated time of every incomplete multipart upload `ms` into the past. */
  ageUploads(ms: number): void;
}

/**
 * A real S3-compatible server (s3rver) on a random port of 127.0.0.1, with one empty bucket. s3rver lacks
 * ListMultipartUploads and AbortMultipartUpload; `multipartOperations` answers them from s3rver's own state.
 * With `tls` it serves https with a self-signed certificate (clients must accept it). With
 * `listsUploads: false` it answers ListMultipartUploads NotImplemented, as some S3-compatible stores do; with
 * `uploadsPageMax` it lists at most that many uploads per page (S3: 1000), so paging is tried with a few.
 */
export async function startS3Server(
  options: { tls?: boolean; listsUploads?: boolean; uploadsPageMax?: number } = {},
): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'cts-s3-'));
  const tls = options.tls ? selfSignedCertificate(directory) : null;
  const listen = (handler: RequestListener): Server =>
    tls ? createTlsServer(tls, handler) : createServer(handler);
  const s3 = new S3rver({
    silent: true,
    directory,
    configureBuckets: [{ name: S3_TEST_BUCKET, configs: [] }],
  });
  await s3.configureBuckets();
  // Where s3rver keeps the bucket's incomplete multipart uploads (node_modules/s3rver/lib/stores/filesystem.js):
  // one directory per upload id holding the files `key`, `metadata` and one per part.
  const uploads = join(directory, S3_TEST_BUCKET, '._S3rver_uploads');
  const s3rverCallback = s3.callback();
  const received: S3Request[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url!, 'http://s3.test');
    const request: S3Request = {
      method: req.method!,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: null,
      payloadHash: req.headers['x-amz-content-sha256'] as string | undefined,
      checksumCrc32: req.headers['x-amz-checksum-crc32'] as string | undefined,
    };
    res.on('close', () =>
      received.push({ ...request, status: res.writableFinished ? res.statusCode : null }),
    );
    const listing = { listsUploads: options.listsUploads ?? true, pageMax: options.uploadsPageMax ?? 1000 };
    multipartOperations(uploads, request, listing).then(
      (answer) => {
        if (!answer) return s3rverCallback(req, res);
        // A refused part's body is not read: close the connection rather than leave its bytes in it.
        if (answer.status >= 400) res.setHeader('Connection', 'close');
        res.writeHead(answer.status, answer.xml ? { 'Content-Type': 'application/xml' } : {});
        res.end(answer.xml);
      },
      (error: Error) => res.writeHead(500).end(error.message),
    );
  };
  let server: Server | null = null;
  let port = 0;
  const start = async (): Promise<void> => {
    const listening = listen(handle);
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
      S3_ENDPOINT: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
      S3_REGION: 'us-east-1',
      S3_BUCKET: S3_TEST_BUCKET,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    certificate: tls?.cert ?? null,
    stop,
    start,
    async close() {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
    requests: () => [...received],
    ageUploads(ms) {
      const at = new Date(Date.now() - ms);
      for (const uploadId of readdirSync(uploads)) utimesSync(join(uploads, uploadId, 'key'), at, at);
    },
  };
}

/** A key and a self-signed certificate for 127.0.0.1, made in `directory` with the openssl command. */
function selfSignedCertificate(directory: string): { key: Buffer; cert: Buffer } {
  const [key, cert] = [join(directory, 'tls.key'), join(directory, 'tls.crt')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

/** s3rver's upload ids: 32 hex digits (this also keeps a request's id from naming another path). */
const UPLOAD_ID = /^[0-9a-f]{32}$/;

interface Answer {
  status: number;
  xml?: string;
}

/**
 * ListMultipartUploads, AbortMultipartUpload, and UploadPart to an upload that is gone (s3rver would make
 * its directory again), answered as S3 does; null for a request s3rver answers itself.
 */
async function multipartOperations(
  uploads: string,
  { method, path, query }: S3Request,
  { listsUploads, pageMax }: { listsUploads: boolean; pageMax: number },
): Promise<Answer | null> {
  // Path style: /<bucket>/<key>, or /<bucket>/ (the SDK's form) for the bucket itself.
  const [bucket, ...keyParts] = path.slice(1).split('/');
  const key = decodeURIComponent(keyParts.join('/'));
  if (bucket !== S3_TEST_BUCKET) return null;
  if (method === 'GET' && key === '' && 'uploads' in query) {
    if (!listsUploads) return { status: 501, xml: errorXml('NotImplemented', 'ListMultipartUploads') };
    return listUploads(uploads, query, pageMax);
  }
  if (key === '' || query.uploadId === undefined) return null;
  if ((await keyOfUpload(uploads, query.uploadId)) !== key) {
    return { status: 404, xml: errorXml('NoSuchUpload', 'The specified upload does not exist.') };
  }
  if (method !== 'DELETE') return null;
  await rm(join(uploads, query.uploadId), { recursive: true, force: true });
  return { status: 204 };
}

/** The key an upload was initiated for; null when there is no such upload. */
async function keyOfUpload(uploads: string, uploadId: string): Promise<string | null> {
  if (!UPLOAD_ID.test(uploadId)) return null;
  return readFile(join(uploads, uploadId, 'key'), 'utf8').catch(() => null);
}

/**
 * Uploads under `prefix` in key order, then oldest first, after the position `key-marker` and
 * `upload-id-marker` name, at most `max-uploads` (and `pageMax`) of them, as S3 lists them; `delimiter` is not
 * offered.
 */
async function listUploads(uploads: string, query: Record<string, string>, pageMax: number): Promise<Answer> {
  if ('delimiter' in query) {
    return { status: 501, xml: errorXml('NotImplemented', 'This fake does not take delimiter') };
  }
  const prefix = query.prefix ?? '';
  const keyMarker = query['key-marker'] ?? '';
  const uploadIdMarker = query['upload-id-marker'] ?? '';
  const maxUploads = Math.min(Number(query['max-uploads'] ?? 1000), 1000, pageMax);
  const ids = await readdir(uploads).catch(() => []);
  const found = (
    await Promise.all(
      ids.map(async (uploadId) => {
        const key = await keyOfUpload(uploads, uploadId);
        // The `key` file is written once, at CreateMultipartUpload; the directory changes with each part.
        const initiated = await stat(join(uploads, uploadId, 'key')).then(
          (file) => file.mtime,
          () => null,
        );
        // One aborted while this lists it is gone.
        return key === null || initiated === null || !key.startsWith(prefix)
          ? []
          : [{ uploadId, key, initiated }];
      }),
    )
  ).flat();
  found.sort((a, b) => compareKeys(a.key, b.key) || a.initiated.getTime() - b.initiated.getTime());
  // With an upload id marker the listing goes on after that upload of the marker's key; without, after the key.
  const markerAt = found.findIndex(({ key, uploadId }) => key === keyMarker && uploadId === uploadIdMarker);
  const after =
    keyMarker === ''
      ? found
      : uploadIdMarker !== '' && markerAt >= 0
        ? found.slice(markerAt + 1)
        : found.filter(({ key }) => compareKeys(key, keyMarker) > 0);
  const listed = after.slice(0, maxUploads);
  const truncated = after.length > listed.length;
  const last = listed[listed.length - 1];
  const entries = listed.map(
    ({ uploadId, key, initiated }) =>
      `<Upload><Key>${escapeXml(key)}</Key><UploadId>${uploadId}</UploadId>` +
      `<Initiated>${initiated.toISOString()}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`,
  );
  const next = truncated
    ? `<NextKeyMarker>${escapeXml(last.key)}</NextKeyMarker><NextUploadIdMarker>${last.uploadId}</NextUploadIdMarker>`
    : '';
  return {
    status: 200,
    xml:
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
      `<Bucket>${S3_TEST_BUCKET}</Bucket><KeyMarker>${escapeXml(keyMarker)}</KeyMarker>` +
      `<UploadIdMarker>${uploadIdMarker}</UploadIdMarker><Prefix>${escapeXml(prefix)}</Prefix>${next}` +
      `<MaxUploads>${maxUploads}</MaxUploads><IsTruncated>${truncated}</IsTruncated>` +
      `${entries.join('')}</ListMultipartUploadsResult>`,
  };
}

/** S3's key order: by UTF-8 bytes. */
const compareKeys = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}

function escapeXml(text: string): string {
  return text.replace(/[&<>]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[ch]!);
}

export type StorageDriver = 'local' | 's3';
/** The drivers a file suite runs over: every file endpoint answers the same with either. */
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
