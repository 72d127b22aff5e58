import { Injectable } from '@nestjs/common';
import { Db } from '../../database/sql';
import { NotificationsRepository } from '../notifications.repository';

/**
 * Notices that a write of another module causes, produced in that write's transaction so the notice exists
 * exactly when the write commits; the delivery loop routes them like every other notification.
 */
@Injectable()
export class TaskNotices {
  constructor(private readonly notifications: NotificationsRepository) {}

  /** TASK_EXTENDED to the member of the extension just written (nothing while the task is hidden from members). */
  extended(db: Db, taskId: string, userId: string): Promise<void> {
    return this.notifications.produceExtended(db, taskId, userId);
  }

  /**
   * TASK_COMMENT for the comment just written: to the class's OWNER and ADMINs and the author of the comment
   * it answers, never its own author (see COMMENT_SQL); answers how many.
   */
  commentPosted(db: Db, commentId: string): Promise<number> {
    return this.notifications.commentPosted(db, commentId);
  }
}
