import { taskLockedSql } from '../access/task-rules.sql';
import { ClassRole } from '../classes/entities/class-member.entity';
import { isoSql } from '../common/utils/time';
import { AttachmentJson, attachmentsJsonSql } from '../files/attachment.response';

/**
 * One task as the summary query answers it, with the caller's role, state and the counts; timestamps are
 * already the JSON strings (`isoSql`).
 */
export interface TaskRow {
  id: string;
  class_id: string;
  class_name: string;
  class_color: string;
  title: string;
  /** Selected only for a detail; null in lists. */
  description: string | null;
  source_text: string | null;
  start_at: string | null;
  due_at: string | null;
  allow_late_submission: boolean;
  blocked_by: string[];
  created_by: string | null;
  is_published: boolean;
  published_at: string | null;
  created_at: string;
  updated_at: string;
  role: ClassRole;
  member_count: number;
  submitted_count: number;
  /** Counted only for a detail, and only for OWNER and ADMIN (stats); null otherwise. */
  viewed_count: number | null;
  viewed_at: string | null;
  tags: string[] | null;
  sort_order: number | null;
  submitted_at: string | null;
  is_locked: boolean;
  /** Aggregated only for a detail (JSON: `createdAt` is a string); null in lists. */
  attachments: AttachmentJson[] | null;
}

export interface SummaryScope {
  /** Condition on `t` (tasks) and `m` (the caller's membership); `$1` is the caller's id. */
  where: string;
  /** Ordering over a tasks alias. */
  order: (alias: string) => string;
  limit: number;
  /** Adds description, viewed count and attachments (one task). */
  detail: boolean;
}

export const BY_DUE_TIME = (a: string): string => `${a}.due_at ASC NULLS LAST, ${a}.created_at, ${a}.id`;
export const NEWEST_FIRST = (a: string): string => `${a}.created_at DESC, ${a}.id DESC`;

/**
 * Tasks with everything a summary shows, in ONE statement whatever the number of tasks and members: counts
 * are aggregated inside the statement and the caller's state, submission and lock are joined (a detail's
 * attachments too).
 * Only classes the caller belongs to; never deleted tasks. Members and submissions count while the user is
 * still a member of the class.
 */
export function taskSummariesSql(scope: SummaryScope): string {
  return `
    WITH scoped AS (
      SELECT t.id, t.class_id, t.title, ${scope.detail ? 't.description' : 'NULL::text AS description'},
             t.source_text, t.start_at, t.due_at, t.allow_late_submission, t.blocked_by, t.created_by,
             t.is_published, t.published_at, t.created_at, t.updated_at, m.role
        FROM tasks t
        JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $1
       WHERE t.deleted_at IS NULL AND ${scope.where}
       ORDER BY ${scope.order('t')}
       LIMIT ${scope.limit}
    ),
    -- Counted per class through the primary key (an IN over the classes made PostgreSQL scan every membership).
    member_counts AS (
      SELECT k.class_id, (SELECT count(*)::int FROM class_members cm WHERE cm.class_id = k.class_id) AS n
        FROM (SELECT DISTINCT class_id FROM scoped) k
    )
    SELECT st.id, st.class_id, st.title, st.description, st.source_text, ${isoSql('st.start_at')} AS start_at,
           ${isoSql('st.due_at')} AS due_at, st.allow_late_submission, st.blocked_by, st.created_by,
           st.is_published, ${isoSql('st.published_at')} AS published_at, ${isoSql('st.created_at')} AS created_at,
           ${isoSql('st.updated_at')} AS updated_at, st.role, c.name AS class_name, c.color AS class_color,
           COALESCE(mc.n, 0) AS member_count, COALESCE(sc.submitted_count, 0) AS submitted_count,
           ${
             scope.detail
               ? `CASE WHEN st.role <> 'MEMBER' THEN (SELECT count(*)::int FROM task_user_states v
                     JOIN class_members vm ON vm.class_id = st.class_id AND vm.user_id = v.user_id
                    WHERE v.task_id = st.id AND v.viewed_at IS NOT NULL) END`
               : 'NULL::int'
           } AS viewed_count,
           ${
             scope.detail ? attachmentsJsonSql('task_attachments', 'task_id', 'st.id') : 'NULL::json'
           } AS attachments,
           ${isoSql('us.viewed_at')} AS viewed_at, us.tags, us.sort_order,
           ${isoSql('ms.first_submitted_at')} AS submitted_at,
           ${taskLockedSql('st', 'st.role', '$1')} AS is_locked
      FROM scoped st
      JOIN classes c ON c.id = st.class_id
      LEFT JOIN member_counts mc ON mc.class_id = st.class_id
      -- Kept by triggers (migration TaskSubmissionCounts): counting members' submissions here cost more than
      -- the rest of a list.
      LEFT JOIN task_submission_counts sc ON sc.task_id = st.id
      LEFT JOIN task_user_states us ON us.task_id = st.id AND us.user_id = $1
      LEFT JOIN submissions ms ON ms.task_id = st.id AND ms.user_id = $1
     ORDER BY ${scope.order('st')}`;
}
