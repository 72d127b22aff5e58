/**
 * The task rules as SQL, written once: AccessService applies them to one task, the task lists to many.
 * `task` is the alias of a `tasks` row, `role` an SQL expression of the caller's class role, `userId` the
 * parameter holding the caller's id (e.g. `$1`).
 */

/** A MEMBER sees a task once it is published and started. Deleted tasks are excluded separately. */
export const memberSeesTaskSql = (task: string): string =>
  `(${task}.is_published AND (${task}.start_at IS NULL OR ${task}.start_at <= now()))`;

/** What a caller of class role `role` sees: OWNER and ADMIN every task, a MEMBER as `memberSeesTaskSql`. */
export const roleSeesTaskSql = (task: string, role: string): string =>
  `(${role} <> 'MEMBER' OR ${memberSeesTaskSql(task)})`;

/**
 * The tasks a caller of class role `role` finds in the task lists and the calendar feed: published ones,
 * and for a MEMBER only once started. Drafts are reached one by one.
 */
export const listedTaskSql = (task: string, role: string): string =>
  `(${task}.is_published AND ${roleSeesTaskSql(task, role)})`;

/**
 * Some task of `blocked_by` still exists (not deleted) and has no submission of the user. Each blocker is
 * looked up by primary key in a scalar subquery, which the planner cannot turn into a scan of the whole
 * tasks table per task (as it did for `= ANY(blocked_by)` and for a join).
 */
export const blockedForUserSql = (task: string, userId: string): string =>
  `EXISTS (
     SELECT 1 FROM unnest(${task}.blocked_by) AS b(id)
      WHERE (SELECT blocker.deleted_at IS NULL FROM tasks blocker WHERE blocker.id = b.id)
        AND NOT EXISTS (SELECT 1 FROM submissions bs WHERE bs.task_id = b.id AND bs.user_id = ${userId}))`;

/** `isLocked` of CONTRACT §2: blocked for a MEMBER; never locked for OWNER and ADMIN. */
export const taskLockedSql = (task: string, role: string, userId: string): string =>
  `(${role} = 'MEMBER' AND ${blockedForUserSql(task, userId)})`;

/** The late rule, judged by the database clock: a write at exactly dueAt is in time. */
export const lateClosedSql = (task: string): string =>
  `(NOT ${task}.allow_late_submission AND ${task}.due_at IS NOT NULL AND ${task}.due_at < now())`;

/**
 * The columns `late, locked` of `SubmissionWriteRules` (src/access/submission-rules.ts) for a write of the
 * submission of `userId` to `task` by a caller of class role `role`; the one place the two rules are written.
 */
export const submissionWriteRulesSql = (task: string, role: string, userId: string): string =>
  `${lateClosedSql(task)} AS late, ${taskLockedSql(task, role, userId)} AS locked`;
