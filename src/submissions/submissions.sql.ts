import { roleRankSql } from '../classes/classes.repository';

/**
 * SQL fragments shared by the submission queries. Columns are aliased to the entity property names, so a
 * raw row has the shape of `Submission` / `SubmissionAttachment`.
 */
export const SUBMISSION_SUMMARY_COLUMNS = `s.id, s.task_id AS "taskId", s.user_id AS "userId",
  s.first_submitted_at AS "firstSubmittedAt", s.last_updated_at AS "lastUpdatedAt", s.score, s.feedback,
  s.reviewer_id AS "reviewerId", s.reviewed_at AS "reviewedAt", s.is_exemplary AS "isExemplary"`;

export const SUBMISSION_COLUMNS = `${SUBMISSION_SUMMARY_COLUMNS}, s.content`;

export const ATTACHMENT_COLUMNS = `a.id, a.submission_id AS "submissionId", a.file_key AS "fileKey",
  a.original_name AS "originalName", a.mime_type AS "mimeType", a.size_bytes AS "sizeBytes",
  a.created_at AS "createdAt"`;

export const ATTACHMENT_ORDER = 'a.created_at, a.id';

/** Display name: the nickname, else the e-mail (SPEC: "when absent the e-mail address is used"). */
export const DISPLAY_NAME = `COALESCE(NULLIF(u.nickname, ''), u.email)`;

/**
 * Every member of the class of task `$1` with their submission to it (s.* null when none): the rows of
 * the grader's list and of the export. Tables: t task, c class, m membership, u user, sc school, s submission.
 */
export const ROSTER_FROM = `FROM tasks t
  JOIN classes c ON c.id = t.class_id
  JOIN class_members m ON m.class_id = t.class_id
  JOIN users u ON u.id = m.user_id
  LEFT JOIN schools sc ON sc.id = u.school_id
  LEFT JOIN submissions s ON s.task_id = t.id AND s.user_id = m.user_id
 WHERE t.id = $1`;

/** OWNER, ADMINs, MEMBERs, each by display name (case-insensitive), then id so the order is total. */
export const ROSTER_ORDER = `ORDER BY ${roleRankSql('m.role')},
  lower(${DISPLAY_NAME}), ${DISPLAY_NAME}, u.id`;
