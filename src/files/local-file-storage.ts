import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileStorage, FileTooLargeError, StoredFile } from './file-storage';

const KEY_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

/** Files on the local disk under `<DATA_DIR>/files`, spread over 256 sub-folders by key prefix. */
export class LocalFileStorage extends FileStorage {
  constructor(private readonly root: string) {
    super();
  }

  async put(source: Readable, maxBytes: number): Promise<StoredFile> {
    const key = randomBytes(24).toString('base64url');
    const path = this.pathOf(key);
    await mkdir(join(path, '..'), { recursive: true });
    let sizeBytes = 0;
    const limiter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sizeBytes += chunk.length;
        if (sizeBytes > maxBytes) callback(new FileTooLargeError());
        else callback(null, chunk);
      },
    });
    const writer = createWriteStream(path, { flags: 'wx' });
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
