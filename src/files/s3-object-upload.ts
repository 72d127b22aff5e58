import {
  AbortMultipartUploadCommand,
  CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';

/** Every part but the last has this size: the least S3 takes. A smaller object is one PutObject. */
export const S3_PART_SIZE = 5 * 1024 * 1024;
/** Part buffers kept between uploads, so a steady flow of uploads does not allocate new ones. */
const IDLE_PART_BUFFERS_MAX = 4;
const logger = new Logger('S3ObjectUpload');

/**
 * The part buffers of one storage's uploads, at most `max` at once (S3_UPLOAD_MEMORY_MIB): an upload takes
 * one to start, waiting its turn while all are taken (its request stays paused), and a second one only when
 * one is free, which lets it read the next part while it sends one. Without, it reads and sends in turn.
 * A buffer's memory is only what was written into it: a small file does not cost a whole part.
 */
export class PartBuffers {
  private taken = 0;
  private readonly idle: Buffer[] = [];
  private readonly waiting: ((buffer: Buffer) => void)[] = [];

  constructor(private readonly max: number) {}

  take(): Promise<Buffer> {
    return new Promise((resolve) => {
      const buffer = this.takeFree();
      if (buffer) resolve(buffer);
      else this.waiting.push(resolve);
    });
  }

  /** A buffer when one is free and nobody waits for one; else null. */
  takeFree(): Buffer | null {
    if (this.taken >= this.max || this.waiting.length > 0) return null;
    this.taken += 1;
    return this.idle.pop() ?? Buffer.allocUnsafeSlow(S3_PART_SIZE);
  }

  /** Hands `buffer` to the first upload waiting for one, or keeps it for the next. */
  give(buffer: Buffer): void {
    const next = this.waiting.shift();
    if (next) return next(buffer);
    this.taken -= 1;
    if (this.idle.length < IDLE_PART_BUFFERS_MAX) this.idle.push(buffer);
  }
}

/** Copies a stream into part-sized buffers, reading only when asked (the stream's backpressure holds). */
class PartReader {
  private readonly chunks: AsyncIterator<Buffer>;
  /** What is left of a chunk that crossed the end of the last part. */
  private rest: Buffer | null = null;
  private ended = false;

  constructor(source: Readable) {
    this.chunks = source[Symbol.asyncIterator]();
  }

  /** Fills `part` from the stream and answers how many bytes it holds: fewer than its size only at the end. */
  async fill(part: Buffer): Promise<number> {
    let filled = 0;
    while (filled < part.length && !this.ended) {
      let chunk = this.rest;
      this.rest = null;
      if (!chunk) {
        const next = await this.chunks.next();
        if (next.done) {
          this.ended = true;
          break;
        }
        chunk = next.value;
      }
      const copied = chunk.copy(part, filled);
      filled += copied;
      if (copied < chunk.length) this.rest = chunk.subarray(copied);
    }
    return filled;
  }
}

/**
 * Streams `source` into the object `key`: one PutObject below S3_PART_SIZE, else a multipart upload, which
 * reads the next part from the source while it sends the current one when it could take a second buffer.
 * Memory does not grow with the file, and the client's upload need not stall while a part is in flight
 * (lib-storage's `Upload` reads nothing while it sends a part, and copies each part once more). On any
 * failure the multipart upload is aborted, and what the source failed with, or else the store's error, is
 * thrown.
 */
export async function uploadObject(
  client: S3Client,
  buffers: PartBuffers,
  target: { bucket: string; key: string },
  source: Readable,
): Promise<void> {
  const { bucket, key } = target;
  const held = [await buffers.take()];
  const reader = new PartReader(source);
  let sending: Promise<unknown> = Promise.resolve();
  let reading: Promise<number> | null = null;
  let uploadId: string | undefined;
  try {
    let size = await reader.fill(held[0]);
    if (size < S3_PART_SIZE) {
      const body = held[0].subarray(0, size);
      await (sending = client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: size }),
      ));
      return;
    }
    const created = (sending = settledLater(
      client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key })),
    ));
    const spare = buffers.takeFree();
    if (spare) {
      held.push(spare);
      reading = settledLater(reader.fill(spare));
    }
    ({ UploadId: uploadId } = await created);
    const completed: CompletedPart[] = [];
    for (let number = 1; ; number += 1) {
      const buffer = held[(number - 1) % held.length];
      const part = { Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number, ContentLength: size };
      sending = settledLater(client.send(new UploadPartCommand({ ...part, Body: buffer.subarray(0, size) })));
      const { ETag } = (await sending) as { ETag?: string };
      // With two buffers the next part was read meanwhile; with one, the buffer just sent takes it now.
      const nextSize = await (reading ??= settledLater(nextPart(reader, buffer, size)));
      completed.push({ PartNumber: number, ETag });
      if (nextSize === 0) break;
      // The part after the next goes into the buffer just sent.
      reading = held.length === 2 ? settledLater(nextPart(reader, buffer, nextSize)) : null;
      size = nextSize;
    }
    const multipart = { Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: completed } };
    await (sending = client.send(new CompleteMultipartUploadCommand(multipart)));
  } catch (error) {
    source.destroy();
    // No buffer may go back while a read or a send is still using it.
    await Promise.allSettled([sending, reading]);
    if (uploadId) await abort(client, bucket, key, uploadId);
    throw error;
  } finally {
    for (const buffer of held) buffers.give(buffer);
  }
}

/** The size of the part after one of `size` bytes, read into `into`: 0 after the last part. */
const nextPart = (reader: PartReader, into: Buffer, size: number): Promise<number> =>
  size < S3_PART_SIZE ? Promise.resolve(0) : reader.fill(into);

/**
 * `promise`, marked as handled: it is awaited only later, and a rejection meanwhile must not count as
 * unhandled (which would end the process).
 */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** A failed abort leaves the parts to the sweep (`removeIncomplete`) or the bucket's lifecycle rule. */
async function abort(client: S3Client, bucket: string, key: string, uploadId: string): Promise<void> {
  try {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
  } catch (error) {
    logger.warn({ err: error, key, uploadId }, 'Could not abort a multipart upload');
  }
}
