import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RunningJobs } from '../../common/jobs/running-jobs';
import { AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';

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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jobs: RunningJobs,
  ) {}

  @Cron(CronExpression.EVERY_HOUR, { name: 'notifications.retention' })
  async purgeFinished(): Promise<void> {
    await this.jobs.run(() => this.deleteFinished());
  }

  private async deleteFinished(): Promise<void> {
    try {
      await this.deleteInBatches(`notification_id IS NULL AND status = 'SENT'`, []);
      await this.deleteInBatches(
        `status IN ('SENT', 'FAILED') AND updated_at < now() - make_interval(days => $1)`,
        [this.config.notifications.retentionDays],
      );
    } catch (error) {
      this.logger.error({ err: error }, 'Clean-up of finished deliveries failed');
    }
  }

  private async deleteInBatches(condition: string, values: unknown[]): Promise<void> {
    let deleted: number;
    do {
      const [, count] = await this.dataSource.query<[unknown[], number]>(
        `DELETE FROM notification_deliveries
          WHERE id IN (SELECT id FROM notification_deliveries WHERE ${condition} LIMIT ${BATCH})`,
        values,
      );
      deleted = count;
    } while (deleted === BATCH);
  }
}
