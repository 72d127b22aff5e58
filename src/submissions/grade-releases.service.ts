import { Injectable } from '@nestjs/common';
import { TaskAccess } from '../access/access.service';
import { ReleaseGradesResponse } from './dto/release-grades.dto';
import { ReleasedRow, ReleaseScope, SubmissionsRepository } from './submissions.repository';
import { Transactions, Tx } from '../database/transactions';

/** Releasing grades: the release and its GRADE_RELEASED notices commit together. */
@Injectable()
export class GradeReleases {
  constructor(
    private readonly transactions: Transactions,
    private readonly submissions: SubmissionsRepository,
  ) {}

  /** `POST /tasks/:taskId/grades/release`: every graded, unreleased submission (of `userIds` when given). */
  async release({ taskId }: TaskAccess, userIds: string[] | undefined): Promise<ReleaseGradesResponse> {
    const released = await this.transactions.run((manager) =>
      this.releaseGraded(manager, taskId, { userIds }),
    );
    return { released: released.length };
  }

  /**
   * Releases the graded, unreleased submissions of the task in `scope` and produces their notices, in the
   * caller's transaction (a grade under IMMEDIATE, a task switched to IMMEDIATE); those released.
   */
  async releaseGraded(manager: Tx, taskId: string, scope: ReleaseScope): Promise<ReleasedRow[]> {
    const released = await this.submissions.release(manager, taskId, scope);
    await this.submissions.notifyReleased(
      manager,
      released.map((row) => row.id),
    );
    return released;
  }
}
