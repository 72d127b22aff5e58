import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Metrics } from '../metrics/metrics';

/**
 * Runs of a module's periodic housekeeping jobs, so that shutdown waits for the runs in progress (on
 * SIGTERM, in-flight jobs finish) instead of closing the database pool under them, and starts no new one:
 * `@nestjs/schedule` stops its timers only after every module was destroyed. Provided per module. Each run
 * is counted and timed under its job's name (`job_runs_total`); a job that fails rejects, and the caller logs.
 */
@Injectable()
export class RunningJobs implements OnModuleDestroy {
  private readonly runs = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(private readonly metrics: Metrics) {}

  /** Runs the job `name`, or skips it (undefined) once shutdown has begun. */
  async run<T>(name: string, job: () => Promise<T>): Promise<T | undefined> {
    if (this.stopping) return undefined;
    const run = this.metrics.timeJob(name, job);
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
