import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import {
  NotificationsRepository,
  ProductionBatch,
  PublicationScope,
  TASKS_PER_BATCH,
} from '../notifications.repository';

export type { PublicationScope };

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
    return this.drain('TASK_PUBLISHED', () => this.notifications.publishBatch(scope));
  }

  /** TASK_DUE_REMINDER for every task whose reminder moment has come. */
  remindDue(): Promise<number> {
    const hours = this.config.notifications.reminderHoursBeforeDue;
    return this.drain('TASK_DUE_REMINDER', () => this.notifications.remindBatch(hours));
  }

  /**
   * TASK_COMMENT for a comment just written in the transaction of `manager` (see COMMENT_SQL for whom); they
   * commit with the comment, and the delivery loop routes them like every other notification.
   */
  commentPosted(manager: EntityManager, commentId: string): Promise<number> {
    return this.notifications.commentPosted(manager, commentId);
  }

  private async drain(type: string, nextBatch: () => Promise<ProductionBatch>): Promise<number> {
    let produced = 0;
    for (;;) {
      const batch = await nextBatch();
      produced += batch.notifications;
      if (batch.tasks > 0)
        this.logger.log(`${type}: ${batch.notifications} notifications for ${batch.tasks} tasks`);
      if (batch.tasks < TASKS_PER_BATCH) return produced;
    }
  }
}
