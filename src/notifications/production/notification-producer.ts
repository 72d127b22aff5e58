import { Injectable, Logger } from '@nestjs/common';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import {
  EXTENDED_REMINDERS_PER_BATCH,
  NotificationsRepository,
  ProductionBatch,
  PublicationScope,
  TASKS_PER_BATCH,
} from '../notifications.repository';

export type { PublicationScope };

/** Task batches claim at most TASKS_PER_BATCH tasks: a full one may have left more. */
const fullOfTasks = (batch: ProductionBatch): boolean => batch.tasks >= TASKS_PER_BATCH;

/** Finds due events in the database and produces their notifications (PENDING until dispatched). */
@Injectable()
export class NotificationProducer {
  private readonly logger = new Logger(NotificationProducer.name);

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly notifications: NotificationsRepository,
  ) {}

  /** TASK_PUBLISHED for every task (of `scope`) that has become visible and was not announced yet. */
  publishDue(scope: PublicationScope): Promise<number> {
    return this.drain('TASK_PUBLISHED', () => this.notifications.publishBatch(scope), fullOfTasks);
  }

  /** TASK_DUE_REMINDER for every task, and every extended deadline, whose reminder moment has come. */
  async remindDue(): Promise<number> {
    const hours = this.config.notifications.reminderHoursBeforeDue;
    const classWide = await this.drain(
      'TASK_DUE_REMINDER',
      () => this.notifications.remindBatch(hours),
      fullOfTasks,
    );
    const extended = await this.drain(
      'TASK_DUE_REMINDER (extended deadlines)',
      () => this.notifications.remindExtendedBatch(hours),
      (batch) => batch.notifications >= EXTENDED_REMINDERS_PER_BATCH,
    );
    return classWide + extended;
  }

  /** Runs batches while `full` says the last one may have left more. */
  private async drain(
    type: string,
    nextBatch: () => Promise<ProductionBatch>,
    full: (batch: ProductionBatch) => boolean,
  ): Promise<number> {
    let produced = 0;
    for (;;) {
      const batch = await nextBatch();
      produced += batch.notifications;
      if (batch.tasks > 0)
        this.logger.log(`${type}: ${batch.notifications} notifications for ${batch.tasks} tasks`);
      if (!full(batch)) return produced;
    }
  }
}
