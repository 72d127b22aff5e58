import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { RunningJobs } from '../../common/jobs/running-jobs';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import { DeliveriesRepository } from './deliveries.repository';
import { NotificationSchedulesRepository } from '../schedule/notification-schedules.repository';

/** Rows deleted per statement, so a large backlog never holds locks or builds WAL for long. */
const BATCH = 5000;

/**
 * Finished deliveries are kept for `DELIVERY_RETENTION_DAYS` (what was sent where, and why it failed), then
 * deleted; a sent account e-mail goes at once, since its payload holds a one-time link. The inbox itself
 * (`notifications`) is the users' and stays. Idempotent, so every instance may run it.
 */
@Injectable()
export class DeliveryRetention {
  private readonly logger = new Logger(DeliveryRetention.name);

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly deliveries: DeliveriesRepository,
    private readonly schedules: NotificationSchedulesRepository,
    private readonly jobs: RunningJobs,
  ) {}

  @Cron(CronExpression.EVERY_HOUR, { name: 'notifications.retention' })
  async purgeFinished(): Promise<void> {
    await this.jobs
      .run('notifications.retention', () => this.deleteFinished())
      .catch((error: unknown) => this.logger.error({ err: error }, 'Clean-up of finished deliveries failed'));
  }

  private async deleteFinished(): Promise<void> {
    await this.inBatches(() => this.deliveries.deleteSentAccountMails(BATCH));
    const days = this.config.notifications.retentionDays;
    await this.inBatches(() => this.deliveries.deleteFinishedBefore(days, BATCH));
    await this.inBatches(() => this.schedules.deleteOldDigestDays(BATCH));
  }

  /** Repeats a bounded delete until a batch comes back short. */
  private async inBatches(deleteBatch: () => Promise<number>): Promise<void> {
    while ((await deleteBatch()) === BATCH);
  }
}
