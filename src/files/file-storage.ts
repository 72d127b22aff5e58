import type { Readable } from 'node:stream';

/** What a stored file needs to be served back. */
export interface StoredFile {
  key: string;
  sizeBytes: number;
}

/**
 * Where uploaded bytes live. The local-disk driver is the default; an S3-compatible driver implements the
 * same interface. Keys are random, URL-safe and contain no `/`.
 */
export abstract class FileStorage {
  /** Streams `source` into a new object and returns its key; on failure nothing is left behind. */
  abstract put(source: Readable, maxBytes: number): Promise<StoredFile>;
  abstract read(key: string): Promise<Readable>;
  /** Removes objects; missing keys are ignored. */
  abstract remove(keys: readonly string[]): Promise<void>;
}

export class FileTooLargeError extends Error {
  constructor() {
    super('File too large');
  }
}
