import { AppError, ErrorCode } from '../common/errors/app-error';

/**
 * The rules of a write of the caller's own submission (content, attachment upload, attachment delete), as
 * `submissionWriteRulesSql` judges them by the database clock.
 */
export interface SubmissionWriteRules {
  /**
   * The member's deadline (their extension's when later than dueAt) has passed and late submissions are off
   * for them (a write at exactly the deadline is in time).
   */
  late: boolean;
  /** A MEMBER has not submitted every task this one is blocked by (the task's `isLocked`). */
  locked: boolean;
}

/** The 403 answers of the rules, for the routes that document them. */
export const SUBMISSION_WRITE_FORBIDDEN =
  'LATE_SUBMISSION_CLOSED: due time passed and late submissions are off. ' +
  'TASK_LOCKED: a MEMBER has not submitted every task this one is blocked by.';

/** When both rules apply, LATE_SUBMISSION_CLOSED wins: unlocking would not help any more. */
export function assertSubmissionWritable(rules: SubmissionWriteRules): void {
  if (rules.late) {
    throw new AppError(
      ErrorCode.LATE_SUBMISSION_CLOSED,
      'The due time has passed and late submissions are closed',
    );
  }
  if (rules.locked) {
    throw new AppError(ErrorCode.TASK_LOCKED, 'Submit the tasks this one is blocked by first');
  }
}
