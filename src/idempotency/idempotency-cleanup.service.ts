import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { RunningJobs } from '../common/jobs/running-jobs';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IDEMPOTENCY_RETENTION_SECONDS } from './idempotency.interceptor';

/** Rows per statement, so no run holds many row locks or a long transaction. */
export const CLEANUP_BATCH = 1000;
/** Batches per run; a backlog beyond it waits for the next hour. */
const CLEANUP_BATCHES_MAX = 100;

/**
 * Deletes idempotency keys past their 24 hours, hourly, in bounded batches. Every instance runs it: the
 * batches skip the rows another instance is deleting, so two runs share the work instead of waiting.
 */
@Injectable()
export class IdempotencyCleanupService {
  private readonly logger = new Logger('IdempotencyCleanup');

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly jobs: RunningJobs,
  ) {}

  @Cron(CronExpression.EVERY_HOUR)
  async purgeExpired(): Promise<void> {
    await this.jobs
      .run('idempotency.cleanup', () => this.deleteExpired())
      .catch((error: unknown) =>
        this.logger.error({ err: error }, 'Clean-up of expired idempotency keys failed'),
      );
  }

  /** The number of keys deleted. */
  async deleteExpired(): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < CLEANUP_BATCHES_MAX; batch += 1) {
      const count = await this.keys.deleteExpired(IDEMPOTENCY_RETENTION_SECONDS, CLEANUP_BATCH);
      deleted += count;
      if (count < CLEANUP_BATCH) break;
    }
    return deleted;
  }
}
