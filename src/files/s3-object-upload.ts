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
import { crc32 } from 'node:zlib';
import { S3_MAX_PARTS, S3_PART_SIZE } from '../config/files.config';
import { FileTooLargeError } from './file-storage';
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

  /**
   * A buffer, once one is free. An upload whose client left while it waited (`abandoned` aborted) gives up
   * its place in the queue: the promise fails with the abort's reason and takes no buffer.
   */
  take(abandoned: AbortSignal): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (abandoned.aborted) return reject(abandoned.reason as Error);
      const buffer = this.takeFree();
      if (buffer) return resolve(buffer);
      const waiter = (given: Buffer): void => {
        abandoned.removeEventListener('abort', leave);
        resolve(given);
      };
      const leave = (): void => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(abandoned.reason as Error);
      };
      abandoned.addEventListener('abort', leave, { once: true });
      this.waiting.push(waiter);
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
 * The CRC32 of `body` as S3's `x-amz-checksum-crc32` carries it: the store recomputes it from the bytes it
 * received and refuses the request (BadDigest) when they differ, so a part buffer changed while it was being
 * sent fails the upload instead of corrupting the object.
 */
function checksumOf(body: Buffer): string {
  const digest = Buffer.alloc(4);
  digest.writeUInt32BE(crc32(body));
  return digest.toString('base64');
}

/**
 * Streams `source` into the object `key`: one PutObject below S3_PART_SIZE, else a multipart upload, which
 * reads the next part from the source while it sends the current one when it could take a second buffer.
 * Memory does not grow with the file, and the client's upload need not stall while a part is in flight.
 * Every request carries the CRC32 of its body, and the completion each part's (S3's composite checksum).
 * While it waits for a part buffer, an upload whose source fails or closes leaves the queue. A source longer
 * than `maxParts` parts fails with FileTooLargeError before its first part over. On any failure the
 * multipart upload is aborted, and what the source failed with, or else the store's error, is thrown.
 */
export async function uploadObject(
  client: S3Client,
  buffers: PartBuffers,
  target: { bucket: string; key: string },
  source: Readable,
  maxParts = S3_MAX_PARTS,
): Promise<void> {
  const { bucket, key } = target;
  const held = [await takeWhileSourceLasts(buffers, source)];
  const reader = new PartReader(source);
  let sending: Promise<unknown> = Promise.resolve();
  let reading: Promise<number> | null = null;
  let uploadId: string | undefined;
  try {
    let size = await reader.fill(held[0]);
    if (size < S3_PART_SIZE) {
      const body = held[0].subarray(0, size);
      const object = { Bucket: bucket, Key: key, Body: body, ContentLength: size };
      await (sending = client.send(new PutObjectCommand({ ...object, ChecksumCRC32: checksumOf(body) })));
      return;
    }
    const created = (sending = settledLater(
      client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ChecksumAlgorithm: 'CRC32' })),
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
      const body = buffer.subarray(0, size);
      const part = { Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: number, ContentLength: size };
      const checksum = checksumOf(body);
      sending = settledLater(
        client.send(new UploadPartCommand({ ...part, Body: body, ChecksumCRC32: checksum })),
      );
      const { ETag } = (await sending) as { ETag?: string };
      // With two buffers the next part was read meanwhile; with one, the buffer just sent takes it now.
      const nextSize = await (reading ??= settledLater(nextPart(reader, buffer, size)));
      completed.push({ PartNumber: number, ETag, ChecksumCRC32: checksum });
      if (nextSize === 0) break;
      if (number === maxParts) throw new FileTooLargeError();
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

/**
 * A part buffer for an upload from `source`; fails with the source's error (or a plain one when it just
 * closed) if the source ends first, e.g. its client left while the upload waited for a buffer.
 */
async function takeWhileSourceLasts(buffers: PartBuffers, source: Readable): Promise<Buffer> {
  const abandoned = new AbortController();
  const leave = (error?: Error): void =>
    abandoned.abort(error ?? new Error('The upload source closed before a part buffer was free'));
  if (source.destroyed) leave(source.errored ?? undefined);
  source.once('error', leave);
  source.once('close', leave);
  try {
    return await buffers.take(abandoned.signal);
  } finally {
    source.off('error', leave);
    source.off('close', leave);
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
