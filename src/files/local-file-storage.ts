import { Logger } from '@nestjs/common';
import { chmodSync, constants, createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { access, lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  FILE_KEY_PATTERN,
  FileStorage,
  newFileKey,
  SizeLimiter,
  StoredFile,
  StoredObject,
} from './file-storage';

/** The sub-folders files are spread over: the first two characters of their keys. */
const PREFIX_PATTERN = /^[A-Za-z0-9_-]{2}$/;
/** Uploads being received, under the root so that the final rename stays on one filesystem. */
const INCOMPLETE_FOLDER = 'tmp';
const INCOMPLETE_SUFFIX = '.partial';
const PRIVATE_DIRECTORY = 0o700;
const PRIVATE_FILE = 0o600;
const logger = new Logger('LocalFileStorage');

/** The entries of a folder; none when it does not exist (yet, or any more). */
async function entriesOf(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Makes a rename in `path` durable, so that a committed row never outlives its file in a power loss. */
async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * Files on the local disk under `<DATA_DIR>/files`, spread over 256 sub-folders by key prefix. Only the
 * service's own account may read them: with the default umask they were readable by every local account.
 * An upload is written to `tmp/<key>.partial`, flushed to disk and renamed to its key once complete.
 */
export class LocalFileStorage extends FileStorage {
  private readonly incomplete: string;

  constructor(private readonly root: string) {
    super();
    this.incomplete = join(root, INCOMPLETE_FOLDER);
    mkdirSync(this.incomplete, { recursive: true, mode: PRIVATE_DIRECTORY });
    // A root made by an earlier version is world-readable; closing it closes everything below it. A root
    // owned by another account (a mounted volume) cannot be changed: said once, not a reason to stop.
    try {
      chmodSync(root, PRIVATE_DIRECTORY);
    } catch (error) {
      logger.warn({ err: error, root }, 'Could not make the file storage folder private (mode 0700)');
    }
  }

  async put(source: Readable, maxBytes: number): Promise<StoredFile> {
    const key = newFileKey();
    const path = this.pathOf(key);
    const partial = join(this.incomplete, `${key}${INCOMPLETE_SUFFIX}`);
    await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIRECTORY });
    const limiter = new SizeLimiter(maxBytes);
    // flush: the bytes are on the disk before the rename shows them under their key.
    const writer = createWriteStream(partial, { flags: 'wx', mode: PRIVATE_FILE, flush: true });
    try {
      await pipeline(source, limiter, writer);
      await rename(partial, path);
      await syncFolder(dirname(path));
    } catch (error) {
      // The file may still be opening when the pipeline fails: remove it only once the writer has closed,
      // else the late open leaves an orphan behind.
      if (!writer.closed) await new Promise<void>((resolve) => writer.once('close', () => resolve()));
      await Promise.all([rm(partial, { force: true }), rm(path, { force: true })]);
      throw error;
    }
    return { key, sizeBytes: limiter.bytes };
  }

  async read(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    await stat(path);
    return createReadStream(path);
  }

  async remove(keys: readonly string[]): Promise<void> {
    await Promise.all(
      keys.filter((key) => FILE_KEY_PATTERN.test(key)).map((key) => rm(this.pathOf(key), { force: true })),
    );
  }

  /** Folders and files are read in code-unit order, which for these ASCII names is byte order. */
  async list(after: string | undefined, limit: number): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    const prefixes = (await entriesOf(this.root)).filter((name) => PREFIX_PATTERN.test(name)).sort();
    for (const prefix of prefixes) {
      if (after !== undefined && prefix < after.slice(0, 2)) continue;
      let keys = (await entriesOf(join(this.root, prefix)))
        .filter(
          (key) =>
            FILE_KEY_PATTERN.test(key) && key.startsWith(prefix) && (after === undefined || key > after),
        )
        .sort();
      while (keys.length > 0 && found.length < limit) {
        const batch = keys.slice(0, limit - found.length);
        keys = keys.slice(batch.length);
        // A file gone since the folder was read was removed meanwhile: nothing to sweep.
        const stats = await Promise.all(batch.map((key) => stat(this.pathOf(key)).catch(() => null)));
        batch.forEach((key, i) => {
          if (stats[i]?.isFile()) found.push({ key, sizeBytes: stats[i].size, modifiedAt: stats[i].mtime });
        });
      }
      if (found.length === limit) break;
    }
    return found;
  }

  async removeIncomplete(before: Date, limit: number): Promise<number> {
    let removed = 0;
    for (const name of await entriesOf(this.incomplete)) {
      if (removed === limit) break;
      const path = join(this.incomplete, name);
      const stats = await lstat(path).catch(() => null);
      if (!stats || stats.mtime >= before) continue;
      await rm(path, { force: true, recursive: true });
      removed += 1;
    }
    return removed;
  }

  protected async probe(): Promise<void> {
    await access(this.incomplete, constants.W_OK);
  }

  private pathOf(key: string): string {
    if (!FILE_KEY_PATTERN.test(key)) throw new Error('Invalid file key');
    return join(this.root, key.slice(0, 2), key);
  }
}
