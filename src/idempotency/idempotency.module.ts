import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { RunningJobs } from '../common/jobs/running-jobs';
import { IdempotencyCleanupService } from './idempotency-cleanup.service';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/** `Idempotency-Key` for every authenticated write (a global interceptor), and the clean-up of old keys. */
@Module({
  providers: [
    IdempotencyKeysRepository,
    IdempotencyCleanupService,
    RunningJobs,
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
  ],
})
export class IdempotencyModule {}
