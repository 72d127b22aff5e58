import fs, {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { FileTooLargeError } from './file-storage';
import { LocalFileStorage } from './local-file-storage';

const HOUR_MS = 60 * 60 * 1000;

describe('LocalFileStorage', () => {
  let root: string;
  let storage: LocalFileStorage;
  const incomplete = () => readdirSync(join(root, 'tmp'));
  /** Writes a file as an earlier upload or crash left it, last written `ageMs` ago. */
  const plant = (path: string, ageMs: number): void => {
    writeFileSync(path, 'left over');
    const at = new Date(Date.now() - ageMs);
    utimesSync(path, at, at);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cts-storage-'));
    storage = new LocalFileStorage(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  describe('put', () => {
    it('receives into tmp/<key>.partial and shows the file under its key only once complete', async () => {
      const source = new PassThrough();
      const stored = storage.put(source, 1024);
      source.write('first half, ');
      while (incomplete().length === 0 || statSync(join(root, 'tmp', incomplete()[0])).size === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(incomplete()).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{32}\.partial$/)]);
      expect(await storage.list(undefined, 10)).toEqual([]);

      source.end('second half');
      const { key, sizeBytes } = await stored;
      expect(incomplete()).toEqual([]);
      expect(sizeBytes).toBe(23);
      expect(readFileSync(join(root, key.slice(0, 2), key), 'utf8')).toBe('first half, second half');
    });

    it('flushes the bytes to disk before they show under the key', async () => {
      const fsync = jest.spyOn(fs, 'fsync');
      try {
        await storage.put(Readable.from([Buffer.from('durable')]), 1024);
        expect(fsync).toHaveBeenCalled();
      } finally {
        fsync.mockRestore();
      }
    });

    it('leaves neither a partial nor a final file when the upload fails', async () => {
      await expect(storage.put(Readable.from([Buffer.alloc(2048)]), 1024)).rejects.toBeInstanceOf(
        FileTooLargeError,
      );
      expect(incomplete()).toEqual([]);
      expect(await storage.list(undefined, 10)).toEqual([]);
    });
  });

  describe('list', () => {
    it('pages through keys in byte order with their last write, skipping what is no stored file', async () => {
      const keys = [
        'AAAAAAAAAAAAAAAAAAAA',
        'AAzzzzzzzzzzzzzzzzzz',
        'B-aaaaaaaaaaaaaaaaaa',
        'B_aaaaaaaaaaaaaaaaaa',
      ];
      for (const key of keys) {
        mkdirSync(join(root, key.slice(0, 2)), { recursive: true });
        plant(join(root, key.slice(0, 2), key), 2 * HOUR_MS);
      }
      plant(join(root, 'AA', 'not a key'), 0);
      plant(join(root, 'tmp', 'BBBBBBBBBBBBBBBBBBBBBBBB.partial'), 0);

      const all = await storage.list(undefined, 10);
      expect(all.map((object) => object.key)).toEqual(keys);
      for (const object of all) {
        expect(Date.now() - object.modifiedAt.getTime()).toBeGreaterThanOrEqual(2 * HOUR_MS - 1000);
      }
      expect((await storage.list(undefined, 2)).map((object) => object.key)).toEqual(keys.slice(0, 2));
      expect((await storage.list(keys[1], 2)).map((object) => object.key)).toEqual(keys.slice(2));
      expect(await storage.list(keys[3], 2)).toEqual([]);
    });
  });

  describe('removeIncomplete', () => {
    it('removes partial uploads last written before the cut-off, at most `limit`, and keeps newer ones', async () => {
      for (const name of ['a.partial', 'b.partial', 'c.partial']) plant(join(root, 'tmp', name), 2 * HOUR_MS);
      plant(join(root, 'tmp', 'in-flight.partial'), 60_000);
      const cutoff = new Date(Date.now() - HOUR_MS);

      expect(await storage.removeIncomplete(cutoff, 2)).toBe(2);
      expect(incomplete()).toHaveLength(2);
      expect(await storage.removeIncomplete(cutoff, 2)).toBe(1);
      expect(incomplete()).toEqual(['in-flight.partial']);
      expect(await storage.removeIncomplete(cutoff, 2)).toBe(0);
    });
  });
});
