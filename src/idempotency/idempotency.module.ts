import { Module } from '@nestjs/common';
import { RunningJobs } from '../common/jobs/running-jobs';
import { IdempotencyCleanupService } from './idempotency-cleanup.service';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotentWriteRoutes } from './idempotent-write-routes';

/** `Idempotency-Key` for every authenticated write (an interceptor on each write route), and the clean-up of old keys. */
@Module({
  providers: [
    IdempotencyKeysRepository,
    IdempotencyCleanupService,
    RunningJobs,
    IdempotencyInterceptor,
    IdempotentWriteRoutes,
  ],
})
export class IdempotencyModule {}
