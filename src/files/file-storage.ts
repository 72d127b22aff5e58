import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Readable, Transform, TransformCallback } from 'node:stream';
import { AppError, ErrorCode } from '../common/errors/app-error';

const DISCARD_BATCH = 100;
/** How long `/health` reuses the store's last answer, so probes do not each call the store. */
export const STORAGE_CHECK_CACHE_MS = 10_000;
/** What a stored file's key looks like: what `newFileKey` makes (and what older versions made). */
export const FILE_KEY_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;
const logger = new Logger('FileStorage');

/** A new random, URL-safe key without `/`. */
export const newFileKey = (): string => randomBytes(24).toString('base64url');

/** The store failed or did not answer: 503 STORAGE_UNAVAILABLE, the cause logged. */
export function storageUnavailable(cause: unknown): AppError {
  logger.error({ err: cause }, 'File storage failed');
  return new AppError(ErrorCode.STORAGE_UNAVAILABLE, 'File storage unavailable, try again later');
}

/** What a stored file needs to be served back. */
export interface StoredFile {
  key: string;
  sizeBytes: number;
}

/** A stored object as the orphan sweep sees it. */
export interface StoredObject {
  key: string;
  sizeBytes: number;
  /** When its bytes were last written: the end of its upload. */
  modifiedAt: Date;
}

/**
 * Where uploaded bytes live. The local-disk driver is the default; an S3-compatible driver implements the
 * same interface. Keys are random, URL-safe and contain no `/`.
 */
export abstract class FileStorage {
  /**
   * Streams `source` into a new object and returns its key; on failure nothing is left behind. The object
   * appears under its key only once complete: a crash while receiving leaves an incomplete upload, which
   * `removeIncomplete` clears, never a partial object.
   */
  abstract put(source: Readable, maxBytes: number): Promise<StoredFile>;
  abstract read(key: string): Promise<Readable>;
  /** Removes objects; missing keys are ignored. */
  abstract remove(keys: readonly string[]): Promise<void>;
  /**
   * Up to `limit` objects whose keys sort after `after` (from the first when undefined), in ascending byte
   * order of the keys, as S3 lists them: a sweep pages through the store across passes.
   */
  abstract list(after: string | undefined, limit: number): Promise<StoredObject[]>;
  /**
   * Removes up to `limit` incomplete uploads last written before `before` (their process died while
   * receiving them) and answers how many. An upload still being received was written to later than that.
   */
  abstract removeIncomplete(before: Date, limit: number): Promise<number>;
  /** Throws unless the store can be written to now; a cheap call (`available` caches it). */
  protected abstract probe(): Promise<void>;

  private lastCheck: { at: number; available: Promise<boolean> } | null = null;

  /** Whether the store answered its probe, asked at most once per STORAGE_CHECK_CACHE_MS. */
  available(): Promise<boolean> {
    const now = Date.now();
    if (this.lastCheck === null || now - this.lastCheck.at >= STORAGE_CHECK_CACHE_MS) {
      const available = this.probe().then(
        () => true,
        (error: unknown) => {
          logger.warn({ err: error }, 'File storage check failed');
          return false;
        },
      );
      this.lastCheck = { at: now, available };
    }
    return this.lastCheck.available;
  }

  /**
   * Removes the files of rows that are gone (or were never written), in batches so thousands of files do
   * not flood the storage. A failure leaves orphaned files and is logged with `context`, never thrown: the
   * request that let go of them has already succeeded or failed on its own.
   */
  async discard(keys: readonly string[], context: Record<string, unknown> = {}): Promise<void> {
    for (let i = 0; i < keys.length; i += DISCARD_BATCH) {
      const batch = keys.slice(i, i + DISCARD_BATCH);
      try {
        await this.remove(batch);
      } catch (error) {
        logger.error({ err: error, keys: batch, ...context }, 'Could not remove stored files');
      }
    }
  }
}

export class FileTooLargeError extends Error {
  constructor() {
    super('File too large');
  }
}

/** Passes bytes through, counting them, and fails with FileTooLargeError past `maxBytes`. */
export class SizeLimiter extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) callback(new FileTooLargeError());
    else callback(null, chunk);
  }
}

/** `source` through a SizeLimiter; an error of `source` fails the limiter too. */
export function limited(source: Readable, maxBytes: number): SizeLimiter {
  const limiter = new SizeLimiter(maxBytes);
  source.on('error', (error) => limiter.destroy(error));
  return source.pipe(limiter);
}
