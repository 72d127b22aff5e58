import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { RunningJobs } from '../common/jobs/running-jobs';
import { AuthTokensRepository } from './auth-tokens.repository';

/**
 * Deletes account rows that can no longer matter: tokens a day past expiry, e-mail sends older than the
 * 24-hour quota window, finished throttling windows. Idempotent, so every instance may run it.
 */
@Injectable()
export class AccountsCleanupService {
  private readonly logger = new Logger('AccountsCleanup');

  constructor(
    private readonly tokens: AuthTokensRepository,
    private readonly jobs: RunningJobs,
  ) {}

  @Cron(CronExpression.EVERY_HOUR)
  async purgeExpired(): Promise<void> {
    await this.jobs
      .run('accounts.cleanup', () => this.tokens.deleteExpired())
      .catch((error: unknown) =>
        this.logger.error({ err: error }, 'Clean-up of expired account rows failed'),
      );
  }
}
