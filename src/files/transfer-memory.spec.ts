import { constants, PerformanceObserver } from 'node:perf_hooks';
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { countedTransfer, countTransferred, TRANSFER_COLLECTION_BYTES } from './transfer-memory';

describe('transfer memory', () => {
  /** Minor collections V8 reports while `work` runs. */
  const minorCollectionsDuring = async (work: () => void): Promise<number> => {
    let minor = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (
          (entry as unknown as { detail: { kind: number } }).detail.kind ===
          constants.NODE_PERFORMANCE_GC_MINOR
        )
          minor += 1;
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    work();
    // GC entries reach observers asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    return minor;
  };

  it('runs a minor collection each time the transfers of the process moved TRANSFER_COLLECTION_BYTES', async () => {
    // Whatever earlier counts left, this many bytes cross the threshold two or three times, in 384 chunks.
    const collections = await minorCollectionsDuring(() => {
      for (let moved = 0; moved < 3 * TRANSFER_COLLECTION_BYTES; moved += 64 * 1024)
        countTransferred(64 * 1024);
    });
    expect(collections).toBeGreaterThanOrEqual(2);
    expect(collections).toBeLessThanOrEqual(4);
  });

  it('passes the bytes of a download through unchanged', async () => {
    const content = Buffer.from('a download, in two chunks');
    const source = Readable.from([content.subarray(0, 5), content.subarray(5)]);
    expect((await buffer(countedTransfer(source))).equals(content)).toBe(true);
  });

  it("fails the download with its source's error, and closes the source when the download is destroyed", async () => {
    const failing = new PassThrough();
    const failed = buffer(countedTransfer(failing));
    failing.destroy(new Error('disk gone'));
    await expect(failed).rejects.toThrow('disk gone');

    const source = new PassThrough();
    countedTransfer(source).destroy();
    await nextTurn();
    expect(source.destroyed).toBe(true);
  });
});
