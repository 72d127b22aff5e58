/**
 * The task rules as SQL, written once: AccessService applies them to one task, the task lists to many.
 * `task` is the alias of a `tasks` row, `role` an SQL expression of the caller's class role, `userId` the
 * parameter holding the caller's id (e.g. `$1`).
 */

/** A MEMBER sees a task once it is published and started. Deleted tasks are excluded separately. */
export const memberSeesTaskSql = (task: string): string =>
  `(${task}.is_published AND (${task}.start_at IS NULL OR ${task}.start_at <= now()::timestamptz(3)))`;

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

/** `isLocked` of a task: blocked for a MEMBER; never locked for OWNER and ADMIN. */
export const taskLockedSql = (task: string, role: string, userId: string): string =>
  `(${role} = 'MEMBER' AND ${blockedForUserSql(task, userId)})`;

/**
 * The deadline and late rule of member `userId` for `task`, as a one-row subquery for `FROM`
 * or `JOIN LATERAL`, with the columns
 * - `due_at`: the later of the task's dueAt and the member's extension; null when the task has no dueAt;
 * - `allow_late`: the extension's allowLateSubmission when it has one, else the task's;
 * - `extended`: the member has an extension.
 * Every rule that depends on a member's deadline reads it here, so an extension counts everywhere alike.
 */
export const memberDeadlineSql = (task: string, userId: string): string =>
  `(SELECT ${extendedDueAtSql(task, 'ext')} AS due_at,
           coalesce(ext.allow_late_submission, ${task}.allow_late_submission) AS allow_late,
           ext.task_id IS NOT NULL AS extended
      FROM (SELECT 1) one
      LEFT JOIN task_extensions ext ON ext.task_id = ${task}.id AND ext.user_id = ${userId})`;

/**
 * The deadline of a member given their extension row `ext` (all null when none): the later of the task's dueAt
 * and the extension's; null when the task has no dueAt. For statements that join the extensions of many
 * members at once (the gradebook); one member's reads take `memberDeadlineSql`.
 */
export const extendedDueAtSql = (task: string, ext: string): string =>
  `CASE WHEN ${task}.due_at IS NOT NULL THEN greatest(${task}.due_at, ${ext}.due_at) END`;

/** The member's deadline (`due_at` of `memberDeadlineSql`) as a scalar expression. */
export const memberDueAtSql = (task: string, userId: string): string =>
  `(SELECT deadline.due_at FROM ${memberDeadlineSql(task, userId)} deadline)`;

/** The late rule for `userId`, judged by the database clock: a write at exactly the deadline is in time. */
export const lateClosedSql = (task: string, userId: string): string =>
  `EXISTS (SELECT 1 FROM ${memberDeadlineSql(task, userId)} deadline
            WHERE NOT deadline.allow_late AND deadline.due_at < now()::timestamptz(3))`;

/**
 * `isLate` of a submission: first submitted after its submitter's deadline as it stands now;
 * false without a deadline. `submission` is the alias of a `submissions` row.
 */
export const submittedLateSql = (submission: string): string =>
  `EXISTS (SELECT 1 FROM tasks late_task CROSS JOIN LATERAL ${memberDeadlineSql('late_task', `${submission}.user_id`)} deadline
            WHERE late_task.id = ${submission}.task_id AND ${submission}.first_submitted_at > deadline.due_at)`;

/**
 * The columns `late, locked` of `SubmissionWriteRules` (src/access/submission-rules.ts) for a write of the
 * submission of `userId` to `task` by a caller of class role `role`; the one place the two rules are written.
 */
export const submissionWriteRulesSql = (task: string, role: string, userId: string): string =>
  `${lateClosedSql(task, userId)} AS late, ${taskLockedSql(task, role, userId)} AS locked`;
