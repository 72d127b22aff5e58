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
const idlePartBuffers: Buffer[] = [];
const logger = new Logger('S3ObjectUpload');

const takePartBuffer = (): Buffer => idlePartBuffers.pop() ?? Buffer.allocUnsafeSlow(S3_PART_SIZE);
const returnPartBuffers = (buffers: Buffer[]): void => {
  for (const buffer of buffers)
    if (idlePartBuffers.length < IDLE_PART_BUFFERS_MAX) idlePartBuffers.push(buffer);
};

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
 * Streams `source` into the object `key`: one PutObject below S3_PART_SIZE, else a multipart upload that reads
 * the next part from the source while it sends the current one. Two part buffers per upload, reused: memory
 * does not grow with the file, and the client's upload does not stall while a part is in flight (lib-storage's
 * `Upload` reads nothing while it sends a part, and copies each part once more). On any failure the multipart
 * upload is aborted, and what the source failed with, or else the store's error, is thrown.
 */
export async function uploadObject(
  client: S3Client,
  bucket: string,
  key: string,
  source: Readable,
): Promise<void> {
  const reader = new PartReader(source);
  const buffers = [takePartBuffer(), takePartBuffer()];
  let sending: Promise<unknown> = Promise.resolve();
  let reading: Promise<number> = Promise.resolve(0);
  let uploadId: string | undefined;
  try {
    let size = await (reading = reader.fill(buffers[0]));
    if (size < S3_PART_SIZE) {
      const body = buffers[0].subarray(0, size);
      await (sending = client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: size }),
      ));
      return;
    }
    const created = (sending = settledLater(
      client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key })),
    ));
    reading = settledLater(reader.fill(buffers[1]));
    ({ UploadId: uploadId } = await created);
    const completed: CompletedPart[] = [];
    for (let number = 1; ; number += 1) {
      const buffer = buffers[(number - 1) % 2];
      const part = { Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number, ContentLength: size };
      sending = settledLater(client.send(new UploadPartCommand({ ...part, Body: buffer.subarray(0, size) })));
      // While this part is sent, the next one fills the other buffer.
      const [{ ETag }, nextSize] = await Promise.all([sending as Promise<{ ETag?: string }>, reading]);
      completed.push({ PartNumber: number, ETag });
      if (nextSize === 0) break;
      // The part after the next goes into the buffer just sent, unless the next one was the last.
      reading = settledLater(nextSize < S3_PART_SIZE ? Promise.resolve(0) : reader.fill(buffer));
      size = nextSize;
    }
    const multipart = { Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: completed } };
    await (sending = client.send(new CompleteMultipartUploadCommand(multipart)));
  } catch (error) {
    source.destroy();
    // Neither buffer may go back to the pool while a read or a send is still using it.
    await Promise.allSettled([sending, reading]);
    if (uploadId) await abort(client, bucket, key, uploadId);
    throw error;
  } finally {
    returnPartBuffers(buffers);
  }
}

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
