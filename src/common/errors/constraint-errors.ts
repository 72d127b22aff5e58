import { pgConstraint, pgErrorCode } from '../utils/pg-errors';
import { AppError, ErrorCode } from './app-error';

/** Values of the failed write that an answer may name (e.g. the school name). */
export type ConstraintContext = Readonly<Record<string, string>>;

/**
 * The one table of constraint violations that are the client's fault, by constraint name (migrations name
 * every constraint), and the answer each gets. A violation of any other constraint is a bug and stays a 500.
 */
const CONSTRAINT_ERRORS: Readonly<Record<string, (context: ConstraintContext) => AppError>> = {
  uq_users_email: () => AppError.conflict('This e-mail address is already registered'),
  uq_users_school_student: () => AppError.conflict('This student number is already taken in this school'),
  uq_schools_name: ({ name }) => AppError.conflict(`A school named "${name}" already exists`),
  ck_submissions_exemplary_needs_score: () => AppError.validation('isExemplary requires a score'),
  fk_task_comments_reply_to: () => AppError.validation('replyToId must name a comment of this task'),
  // An assessment holds its criterion and its level with the level's points: removing either, or changing
  // those points, while an assessment uses them.
  fk_rubric_assessments_criterion: () => rubricInUse(),
  fk_rubric_assessments_level: () => rubricInUse(),
};

function rubricInUse(): AppError {
  return new AppError(
    ErrorCode.RUBRIC_IN_USE,
    "A criterion or level an assessment uses cannot be removed, nor can a used level's points change",
  );
}

/** SQLSTATE class 23: integrity constraint violations (unique, foreign key, check, not null, exclusion). */
const INTEGRITY_VIOLATION = /^23/;

/** The answer for a violation of a constraint of the table; null for any other error. */
export function constraintError(error: unknown, context: ConstraintContext = {}): AppError | null {
  const constraint = pgConstraint(error);
  if (constraint === undefined || !INTEGRITY_VIOLATION.test(pgErrorCode(error) ?? '')) return null;
  return CONSTRAINT_ERRORS[constraint]?.(context) ?? null;
}

/** Runs a write and throws the table's answer instead of a violation it lists. */
export async function withConstraintErrors<T>(
  write: () => Promise<T>,
  context: ConstraintContext = {},
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw constraintError(error, context) ?? error;
  }
}
