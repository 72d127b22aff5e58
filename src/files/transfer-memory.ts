import { Logger } from '@nestjs/common';
import { pipeline, Readable, Transform } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bytes moved between two minor collections. */
export const TRANSFER_COLLECTION_BYTES = 8 * 1024 * 1024;

type MinorCollection = () => void;

/**
 * V8's `gc()`, taken without starting Node with --expose-gc: the flag exposes it to contexts created after it
 * is set, and is unset again at once. Null where V8 refuses (the transfers then just run without it).
 */
function minorCollection(): MinorCollection | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options: { type: 'minor'; execution: 'sync' }) => void;
    return () => gc({ type: 'minor', execution: 'sync' });
  } catch (error) {
    new Logger('TransferMemory').warn({ err: error }, 'No minor collections during file transfers');
    return null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

const collectMinor = minorCollection();
let movedSinceCollection = 0;

/**
 * Counts bytes an upload or download moved. Each socket or file read hands its chunk over in a Buffer of its
 * own, which V8 frees only at its next collection; a transfer allocates so little else that none comes for
 * tens of MiB, and the chunks already passed on pile up (a 20 MiB download grew the RSS by 16 to 31 MiB, see
 * bench/results.md). A minor collection every TRANSFER_COLLECTION_BYTES, counted over all transfers of the
 * process, frees them for well under a millisecond each.
 */
export function countTransferred(bytes: number): void {
  movedSinceCollection += bytes;
  if (movedSinceCollection >= TRANSFER_COLLECTION_BYTES && collectMinor) {
    movedSinceCollection = 0;
    collectMinor();
  }
}

/** `source` passed through `countTransferred`; errors and destruction travel both ways. */
export function countedTransfer(source: Readable): Readable {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      countTransferred(chunk.length);
      done(null, chunk);
    },
  });
  return pipeline(source, counter, () => undefined);
}
