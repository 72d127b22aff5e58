import { Injectable, OnModuleDestroy } from '@nestjs/common';

/**
 * Runs of a module's periodic housekeeping jobs, so that shutdown waits for the runs in progress (on
 * SIGTERM, in-flight jobs finish) instead of closing the database pool under them, and starts no new one:
 * `@nestjs/schedule` stops its timers only after every module was destroyed. Provided per module.
 */
@Injectable()
export class RunningJobs implements OnModuleDestroy {
  private readonly runs = new Set<Promise<unknown>>();
  private stopping = false;

  /** Runs `job`, or skips it (undefined) once shutdown has begun. */
  async run<T>(job: () => Promise<T>): Promise<T | undefined> {
    if (this.stopping) return undefined;
    const run = job();
    this.runs.add(run);
    try {
      return await run;
    } finally {
      this.runs.delete(run);
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.runs]);
  }
}
