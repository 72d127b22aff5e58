import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  MultipartUpload,
  NoSuchKey,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { OnApplicationShutdown } from '@nestjs/common';
import type { Agent } from 'node:https';
import { Readable } from 'node:stream';
import { S3StorageConfig } from '../config/files.config';
import {
  FILE_KEY_PATTERN,
  FileStorage,
  limited,
  newFileKey,
  storageUnavailable,
  StoredFile,
  StoredObject,
} from './file-storage';
import { PartBuffers, S3_PART_SIZE, uploadObject } from './s3-object-upload';

/** Keys one ListObjectsV2 or DeleteObjects call takes at most. */
const S3_PAGE_MAX = 1000;

/**
 * Over TLS, which already keeps what is sent from being changed on the way, request bodies are not hashed into
 * the signature (S3's "UNSIGNED-PAYLOAD"): else the SDK hashes every 5 MiB part with SHA-256 on the event loop
 * before sending it, and the store hashes it again to check (20 MiB to Ceph RGW on loopback: 258 → 203 ms).
 * Over plain http the signature keeps covering the body, as the SDK does by default.
 */
function markPayloadUnsigned(request: unknown): void {
  const { headers } = request as { headers?: Record<string, string> };
  if (headers) headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
}

/**
 * A client for AWS S3 or an S3-compatible store (MinIO, Ceph/RGW, Cloudflare R2). `httpsAgent` replaces the
 * default one, e.g. to trust another certificate authority.
 */
export function s3Client(config: S3StorageConfig, httpsAgent?: Agent): S3Client {
  const client = new S3Client({
    region: config.region,
    endpoint: config.endpoint ?? undefined,
    forcePathStyle: config.forcePathStyle,
    credentials: config.credentials ?? undefined,
    // Checksums only where S3 requires them: several S3-compatible stores refuse the newer default ones.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000, httpsAgent },
  });
  if (config.endpoint === null || new URL(config.endpoint).protocol === 'https:') {
    client.middlewareStack.add(
      (next) => (args) => {
        markPayloadUnsigned(args.request);
        return next(args);
      },
      { step: 'build', name: 'unsignedPayloadOverTls' },
    );
  }
  return client;
}

/**
 * Files as objects of one bucket, each under its key. S3 shows an object only once its upload completed; a
 * multipart upload a crash interrupted stays as an incomplete upload until `removeIncomplete` aborts it.
 * Failures of the store answer 503 STORAGE_UNAVAILABLE; a missing object stays a plain error (404 upstream).
 */
export class S3FileStorage extends FileStorage implements OnApplicationShutdown {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly partBuffers: PartBuffers;

  /** `httpsAgent`: see `s3Client`. */
  constructor(config: S3StorageConfig, httpsAgent?: Agent) {
    super();
    this.client = s3Client(config, httpsAgent);
    this.bucket = config.bucket;
    this.partBuffers = new PartBuffers(Math.max(1, Math.floor(config.uploadMemoryBytes / S3_PART_SIZE)));
  }

  async put(source: Readable, maxBytes: number): Promise<StoredFile> {
    const key = newFileKey();
    const body = limited(source, maxBytes);
    await this.write(key, body);
    return { key, sizeBytes: body.bytes };
  }

  /** Streams `body` into the object `key` (`files:migrate` keeps the keys of the local files). */
  async write(key: string, body: Readable): Promise<void> {
    let bodyError: Error | undefined;
    body.on('error', (error: Error) => (bodyError = error));
    try {
      await uploadObject(this.client, this.partBuffers, { bucket: this.bucket, key }, body);
    } catch (error) {
      // The client's own failure (too large, aborted) stays what it is; anything else is the store's.
      throw bodyError ?? storageUnavailable(error);
    }
  }

  /** The size of the object `key`; null when there is none. */
  async sizeOf(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) return null;
      throw error;
    }
  }

  async read(key: string): Promise<Readable> {
    try {
      const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Body as Readable;
    } catch (error) {
      if (error instanceof NoSuchKey) throw error;
      throw storageUnavailable(error);
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    const valid = keys.filter((key) => FILE_KEY_PATTERN.test(key));
    for (let i = 0; i < valid.length; i += S3_PAGE_MAX) {
      const objects = valid.slice(i, i + S3_PAGE_MAX).map((key) => ({ Key: key }));
      const { Errors } = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: objects, Quiet: true } }),
      );
      if (Errors?.length) throw new Error(`Could not delete ${Errors.length} objects: ${Errors[0].Message}`);
    }
  }

  /** ListObjectsV2 lists keys in ascending UTF-8 byte order, as the interface asks. */
  async list(after: string | undefined, limit: number): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          StartAfter: continuationToken ? undefined : after,
          ContinuationToken: continuationToken,
          MaxKeys: Math.min(limit - found.length, S3_PAGE_MAX),
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key && object.LastModified && FILE_KEY_PATTERN.test(object.Key)) {
          found.push({ key: object.Key, sizeBytes: object.Size ?? 0, modifiedAt: object.LastModified });
        }
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken && found.length < limit);
    return found;
  }

  /**
   * Aborts multipart uploads started before `before`. A store without ListMultipartUploads (some
   * S3-compatible ones) has nothing to abort here: its bucket lifecycle rule does it (docs/operations.md).
   */
  async removeIncomplete(before: Date, limit: number): Promise<number> {
    let uploads: MultipartUpload[];
    try {
      ({ Uploads: uploads = [] } = await this.client.send(
        new ListMultipartUploadsCommand({ Bucket: this.bucket, MaxUploads: S3_PAGE_MAX }),
      ));
    } catch (error) {
      if (error instanceof S3ServiceException && error.name === 'NotImplemented') return 0;
      throw error;
    }
    const stale = uploads.filter((upload) => upload.Initiated && upload.Initiated < before).slice(0, limit);
    for (const { Key, UploadId } of stale) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }));
    }
    return stale.length;
  }

  protected async probe(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  onApplicationShutdown(): void {
    this.client.destroy();
  }
}
