import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListMultipartUploadsCommandOutput,
  ListObjectsV2Command,
  NoSuchKey,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { OnApplicationShutdown } from '@nestjs/common';
import type { Agent } from 'node:https';
import { Readable } from 'node:stream';
import { S3_PART_SIZE, S3StorageConfig } from '../config/files.config';
import {
  FILE_KEY_PATTERN,
  FileStorage,
  limited,
  newFileKey,
  storageUnavailable,
  StoredFile,
  StoredObject,
} from './file-storage';
import { PartBuffers, uploadObject } from './s3-object-upload';

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
 * Files as objects of one bucket, each under its key after S3_KEY_PREFIX. S3 shows an object only once its upload completed; a
 * multipart upload a crash interrupted stays as an incomplete upload until `removeIncomplete` aborts it.
 * Failures of the store answer 503 STORAGE_UNAVAILABLE; a missing object stays a plain error (404 upstream).
 */
export class S3FileStorage extends FileStorage implements OnApplicationShutdown {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partBuffers: PartBuffers;

  /** `httpsAgent`: see `s3Client`. */
  constructor(config: S3StorageConfig, httpsAgent?: Agent) {
    super();
    this.client = s3Client(config, httpsAgent);
    this.bucket = config.bucket;
    this.prefix = config.keyPrefix;
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
      await uploadObject(
        this.client,
        this.partBuffers,
        { bucket: this.bucket, key: this.objectKey(key) },
        body,
      );
    } catch (error) {
      // The client's own failure (too large, aborted) stays what it is; anything else is the store's.
      throw bodyError ?? storageUnavailable(error);
    }
  }

  /** The size of the object `key`; null when there is none. */
  async sizeOf(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      return head.ContentLength ?? 0;
    } catch (error) {
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) return null;
      throw error;
    }
  }

  async read(key: string): Promise<Readable> {
    try {
      const { Body } = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      return Body as Readable;
    } catch (error) {
      if (error instanceof NoSuchKey) throw error;
      throw storageUnavailable(error);
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    const valid = keys.filter((key) => FILE_KEY_PATTERN.test(key));
    for (let i = 0; i < valid.length; i += S3_PAGE_MAX) {
      const objects = valid.slice(i, i + S3_PAGE_MAX).map((key) => ({ Key: this.objectKey(key) }));
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
          Prefix: this.prefix || undefined,
          StartAfter: continuationToken || after === undefined ? undefined : this.objectKey(after),
          ContinuationToken: continuationToken,
          MaxKeys: Math.min(limit - found.length, S3_PAGE_MAX),
        }),
      );
      for (const object of page.Contents ?? []) {
        const key = this.fileKeyOf(object.Key);
        if (key && object.LastModified) {
          found.push({ key, sizeBytes: object.Size ?? 0, modifiedAt: object.LastModified });
        }
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken && found.length < limit);
    return found;
  }

  /**
   * Aborts the service's multipart uploads (its prefix, keys shaped as its own) started before `before`,
   * going through every page of the listing; other writers' uploads in a shared bucket are left alone. A
   * store without ListMultipartUploads (some S3-compatible ones) has nothing to abort here: its bucket
   * lifecycle rule does it (docs/operations.md).
   */
  async removeIncomplete(before: Date, limit: number): Promise<number> {
    let aborted = 0;
    let markers: { KeyMarker?: string; UploadIdMarker?: string } = {};
    while (aborted < limit) {
      let page: ListMultipartUploadsCommandOutput;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.prefix || undefined,
            MaxUploads: S3_PAGE_MAX,
            ...markers,
          }),
        );
      } catch (error) {
        if (error instanceof S3ServiceException && error.name === 'NotImplemented') return 0;
        throw error;
      }
      for (const { Key, UploadId, Initiated } of page.Uploads ?? []) {
        if (aborted === limit || !this.fileKeyOf(Key) || !Initiated || Initiated >= before) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }));
        aborted += 1;
      }
      if (!page.IsTruncated) break;
      markers = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
    }
    return aborted;
  }

  private objectKey(key: string): string {
    return this.prefix + key;
  }

  /** The file key of the object `objectKey`; null for an object that is not one of the service's files. */
  private fileKeyOf(objectKey: string | undefined): string | null {
    if (!objectKey?.startsWith(this.prefix)) return null;
    const key = objectKey.slice(this.prefix.length);
    return FILE_KEY_PATTERN.test(key) ? key : null;
  }

  protected async probe(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  onApplicationShutdown(): void {
    this.client.destroy();
  }
}
