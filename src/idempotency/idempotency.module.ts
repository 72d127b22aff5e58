import { Module } from '@nestjs/common';
import { RunningJobs } from '../common/jobs/running-jobs';
import { MetricsModule } from '../common/metrics/metrics.module';
import { IdempotencyCleanupService } from './idempotency-cleanup.service';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';

/**
 * `Idempotency-Key` for the write routes marked `@IdempotentWrite()` (a module with such routes imports this
 * one: Nest builds the route's IdempotencyInterceptor there, from the repository exported here), and the
 * clean-up of old keys.
 */
@Module({
  imports: [MetricsModule],
  providers: [IdempotencyKeysRepository, IdempotencyCleanupService, RunningJobs],
  exports: [IdempotencyKeysRepository],
})
export class IdempotencyModule {}
