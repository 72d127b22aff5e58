import { OnApplicationShutdown } from '@nestjs/common';
import { Piscina } from 'piscina';
import { createWorkerPool } from '../../common/workers/worker-pool';
import { AiProvider, ParseContext, ParseInput, ParseResult } from '../ai-provider';
import type { LocalParseTask } from './local-parser.worker';

/** Parses that may wait for a busy thread, per thread: a flood is refused instead of piling up in memory. */
const QUEUED_PARSES_PER_THREAD = 16;
/** An idle thread exits after this long; the next parse starts a new one (tens of milliseconds). */
const IDLE_THREAD_EXIT_MS = 60_000;

/**
 * `AI_PROVIDER=local`: a deterministic parser that runs offline (`local-parser.worker.ts`). It costs up to
 * a few hundred milliseconds of CPU on a long text, so it runs in a small pool of worker threads, started
 * at the first parse, and the event loop keeps serving other requests meanwhile. A parse refused because
 * the queue is full throws, which `AiService` answers like any model failure.
 */
export class LocalAiProvider extends AiProvider implements OnApplicationShutdown {
  private readonly pool: Piscina<LocalParseTask, ParseResult>;

  constructor(threads = 1, maxQueue = threads * QUEUED_PARSES_PER_THREAD) {
    super();
    this.pool = createWorkerPool(__dirname, 'local-parser.worker', {
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: IDLE_THREAD_EXIT_MS,
      maxQueue,
    });
  }

  parse(input: ParseInput, context: ParseContext): Promise<ParseResult> {
    return this.pool.run({ input, context });
  }

  /** After the HTTP server closed: parses still running finish, then the threads exit. */
  onApplicationShutdown(): Promise<void> {
    return this.pool.close();
  }
}
