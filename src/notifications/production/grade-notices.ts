import { Injectable } from '@nestjs/common';
import { Db } from '../../database/sql';
import { NotificationsRepository } from '../notifications.repository';

/**
 * GRADE_RELEASED, produced in the transaction that releases the grades, so the notice exists exactly when the
 * release commits; the delivery loop routes it like every other notification.
 */
@Injectable()
export class GradeNotices {
  constructor(private readonly notifications: NotificationsRepository) {}

  /** To the submitter of each of `submissionIds` just released; a submission already announced is skipped. */
  async released(db: Db, submissionIds: string[]): Promise<void> {
    if (submissionIds.length > 0) await this.notifications.produceGradeReleased(db, submissionIds);
  }
}
