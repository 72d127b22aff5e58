import { Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';

const DISCARD_BATCH = 100;
const logger = new Logger('FileStorage');

/** What a stored file needs to be served back. */
export interface StoredFile {
  key: string;
  sizeBytes: number;
}

/** A stored object as the orphan sweep sees it. */
export interface StoredObject {
  key: string;
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
