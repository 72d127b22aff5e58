import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { chmodSync, createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileStorage, FileTooLargeError, StoredFile } from './file-storage';

const KEY_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;
const PRIVATE_DIRECTORY = 0o700;
const PRIVATE_FILE = 0o600;
const logger = new Logger('LocalFileStorage');

/**
 * Files on the local disk under `<DATA_DIR>/files`, spread over 256 sub-folders by key prefix. Only the
 * service's own account may read them: with the default umask they were readable by every local account.
 */
export class LocalFileStorage extends FileStorage {
  constructor(private readonly root: string) {
    super();
    mkdirSync(root, { recursive: true, mode: PRIVATE_DIRECTORY });
    // A root made by an earlier version is world-readable; closing it closes everything below it. A root
    // owned by another account (a mounted volume) cannot be changed: said once, not a reason to stop.
    try {
      chmodSync(root, PRIVATE_DIRECTORY);
    } catch (error) {
      logger.warn({ err: error, root }, 'Could not make the file storage folder private (mode 0700)');
    }
  }

  async put(source: Readable, maxBytes: number): Promise<StoredFile> {
    const key = randomBytes(24).toString('base64url');
    const path = this.pathOf(key);
    await mkdir(join(path, '..'), { recursive: true, mode: PRIVATE_DIRECTORY });
    let sizeBytes = 0;
    const limiter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sizeBytes += chunk.length;
        if (sizeBytes > maxBytes) callback(new FileTooLargeError());
        else callback(null, chunk);
      },
    });
    const writer = createWriteStream(path, { flags: 'wx', mode: PRIVATE_FILE });
    try {
      await pipeline(source, limiter, writer);
    } catch (error) {
      // The file may still be opening when the pipeline fails: remove it only once the writer has closed,
      // else the late open leaves an orphan behind.
      if (!writer.closed) await new Promise<void>((resolve) => writer.once('close', () => resolve()));
      await rm(path, { force: true });
      throw error;
    }
    return { key, sizeBytes };
  }

  async read(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    await stat(path);
    return createReadStream(path);
  }

  async remove(keys: readonly string[]): Promise<void> {
    await Promise.all(
      keys.filter((key) => KEY_PATTERN.test(key)).map((key) => rm(this.pathOf(key), { force: true })),
    );
  }

  private pathOf(key: string): string {
    if (!KEY_PATTERN.test(key)) throw new Error('Invalid file key');
    return join(this.root, key.slice(0, 2), key);
  }
}
