import { Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { FileStorage, StoredFile, StoredObject } from './file-storage';

/** Records each remove call; the calls listed in `failing` throw. */
class RecordingStorage extends FileStorage {
  readonly calls: string[][] = [];
  constructor(private readonly failing: number[] = []) {
    super();
  }
  put(): Promise<StoredFile> {
    throw new Error('not used');
  }
  read(): Promise<Readable> {
    throw new Error('not used');
  }
  list(): Promise<StoredObject[]> {
    throw new Error('not used');
  }
  removeIncomplete(): Promise<number> {
    throw new Error('not used');
  }
  protected probe(): Promise<void> {
    throw new Error('not used');
  }
  async remove(keys: readonly string[]): Promise<void> {
    this.calls.push([...keys]);
    if (this.failing.includes(this.calls.length)) throw new Error('disk gone');
  }
}

describe('FileStorage.discard', () => {
  const keys = Array.from({ length: 250 }, (_, i) => `key-${i}`);

  it('removes in batches of 100', async () => {
    const storage = new RecordingStorage();
    await storage.discard(keys);
    expect(storage.calls.map((batch) => batch.length)).toEqual([100, 100, 50]);
    expect(storage.calls.flat()).toEqual(keys);
  });

  it('logs a failing batch with its context and goes on with the others, never throwing', async () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const storage = new RecordingStorage([2]);
    await expect(storage.discard(keys, { classId: 'c1' })).resolves.toBeUndefined();
    expect(storage.calls).toHaveLength(3);
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0][0]).toMatchObject({ classId: 'c1', keys: keys.slice(100, 200) });
    error.mockRestore();
  });
});
