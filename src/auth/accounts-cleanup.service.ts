import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RunningJobs } from '../common/jobs/running-jobs';

/**
 * Deletes account rows that can no longer matter: tokens a day past expiry, e-mail sends older than the
 * 24-hour quota window, finished throttling windows. Idempotent, so every instance may run it.
 */
@Injectable()
export class AccountsCleanupService {
  private readonly logger = new Logger('AccountsCleanup');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: RunningJobs,
  ) {}

  @Cron(CronExpression.EVERY_HOUR)
  async purgeExpired(): Promise<void> {
    await this.jobs.run(() => this.deleteExpired());
  }

  private async deleteExpired(): Promise<void> {
    try {
      await this.dataSource.query(`DELETE FROM auth_tokens WHERE expires_at < now() - interval '1 day'`);
      await this.dataSource.query(`DELETE FROM email_sends WHERE created_at < now() - interval '24 hours'`);
      await this.dataSource.query(
        `DELETE FROM throttler_hits WHERE window_ends_at < now() AND (blocked_until IS NULL OR blocked_until < now())`,
      );
    } catch (error) {
      this.logger.error({ err: error }, 'Clean-up of expired account rows failed');
    }
  }
}
