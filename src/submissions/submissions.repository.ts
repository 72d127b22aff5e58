import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import { DataSource } from 'typeorm';
import { SubmissionWriteRules } from '../access/submission-rules';
import { roleSeesTaskSql, submissionWriteRulesSql, submittedLateSql } from '../access/task-rules.sql';
import { roleRankSql } from '../classes/classes.repository';
import { ClassRole } from '../classes/entities/class-member.entity';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { Db, one, Prepared, rows } from '../database/sql';
import { compileFanOut } from '../notifications/production/notification-fan-out';
import { defineNotificationType, localTime } from '../notifications/production/notification-types';
import { Notifier } from '../notifications/production/notifier';
import { AttachmentJson, attachmentsJsonSql } from '../files/attachments.sql';
import { SubmissionAttachment } from './entities/submission-attachment.entity';
import { Submission } from './entities/submission.entity';
import { GradeRelease } from './grade-release';
import { Tx } from '../database/transactions';

/** A submission as the queries read it: the row with `isLate` (submitted after the submitter's deadline), judged when read. */
export type SubmissionRow = Submission & { isLate: boolean };

/** A submission row without its body, as the grader's list reads it. */
export type SubmissionSummaryRow = Omit<SubmissionRow, 'content'>;

interface RosterMember {
  memberId: string;
  nickname: string | null;
  email: string;
  schoolName: string | null;
  studentId: string | null;
  role: ClassRole;
}

/** One class member of the grader's list; the submission columns are all null when there is no submission. */
export type RosterRow = RosterMember & (SubmissionSummaryRow | { [K in keyof SubmissionSummaryRow]: null });

/**
 * The answer of the one-statement PUT: the rules, the caller's class role, and the submission when the rules
 * allowed the write.
 */
export type UpsertRow = SubmissionWriteRules & { [K in keyof SubmissionRow]: SubmissionRow[K] | null } & {
  role: ClassRole;
  attachments: AttachmentJson[] | null;
};

/** A graded submission, with the grade-release mode of its task. */
export type GradedRow = SubmissionRow & { gradeRelease: GradeRelease };

export type ReleasedRow = Pick<Submission, 'id' | 'releasedAt'>;

/** Which graded, unreleased submissions of a task a release takes: all, those of some users, or one. */
export interface ReleaseScope {
  userIds?: string[];
  submissionId?: string;
}

/** One line of the CSV export. */
export interface ExportRow {
  displayName: string;
  schoolName: string | null;
  studentId: string | null;
  className: string;
  title: string;
  firstSubmittedAt: Date | null;
  lastUpdatedAt: Date | null;
  score: string | null;
}

export interface NewSubmissionAttachment {
  fileKey: string;
  originalName: string;
  mimeType: string | null;
  sizeBytes: number;
}

export interface Grade {
  score?: number | null;
  feedback?: string | null;
  isExemplary?: boolean;
  reviewerId: string;
}

/**
 * SQL fragments shared by the submission queries. Columns are aliased to the entity property names, so a
 * raw row has the shape of `Submission` / `SubmissionAttachment`.
 */
const SUBMISSION_SUMMARY_COLUMNS = `s.id, s.task_id AS "taskId", s.user_id AS "userId",
  s.first_submitted_at AS "firstSubmittedAt", s.last_updated_at AS "lastUpdatedAt", s.score, s.feedback,
  s.reviewer_id AS "reviewerId", s.reviewed_at AS "reviewedAt", s.is_exemplary AS "isExemplary",
  ${submittedLateSql('s')} AS "isLate", s.released_at AS "releasedAt"`;

const SUBMISSION_COLUMNS = `${SUBMISSION_SUMMARY_COLUMNS}, s.content`;

const ATTACHMENT_COLUMNS = `a.id, a.submission_id AS "submissionId", a.file_key AS "fileKey",
  a.original_name AS "originalName", a.mime_type AS "mimeType", a.size_bytes AS "sizeBytes",
  a.created_at AS "createdAt"`;

const ATTACHMENT_ORDER = 'a.created_at, a.id';

/** A submission has a grade to show once it has a score or feedback (alias `s` = submissions). */
const GRADED = '(s.score IS NOT NULL OR s.feedback IS NOT NULL)';

/** Display name: the nickname, else the e-mail address. */
const DISPLAY_NAME = `COALESCE(NULLIF(u.nickname, ''), u.email)`;

/**
 * Every member of the class of task `$1` with their submission to it (s.* null when none): the rows of
 * the grader's list and of the export. Tables: t task, c class, m membership, u user, sc school, s submission.
 */
const ROSTER_FROM = `FROM tasks t
  JOIN classes c ON c.id = t.class_id
  JOIN class_members m ON m.class_id = t.class_id
  JOIN users u ON u.id = m.user_id
  LEFT JOIN schools sc ON sc.id = u.school_id
  LEFT JOIN submissions s ON s.task_id = t.id AND s.user_id = m.user_id
 WHERE t.id = $1`;

/** OWNER, ADMINs, MEMBERs, each by display name (case-insensitive), then id so the order is total. */
const ROSTER_ORDER = `ORDER BY ${roleRankSql('m.role')},
  lower(${DISPLAY_NAME}), ${DISPLAY_NAME}, u.id`;

/**
 * PUT of the caller's submission as one prepared statement (its own transaction): the task row is
 * share-locked while the rules are judged and the row is upserted, as `SubmissionsService.writeMine` does in a
 * transaction (the lock rule for MEMBERs only). No row unless the caller is a member who may see the task; the
 * submission columns are null when a rule refused the write.
 */
const UPSERT_MINE = new Prepared(
  'submissions.upsert_mine',
  `WITH rules AS (
     SELECT ${submissionWriteRulesSql('t', 'm.role', '$2')}, m.role
       FROM tasks t
       JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $2
      WHERE t.id = $1 AND t.deleted_at IS NULL AND ${roleSeesTaskSql('t', 'm.role')}
        FOR SHARE OF t
   ), saved AS (
     INSERT INTO submissions AS s (task_id, user_id, content)
     SELECT $1::uuid, $2::uuid, $3::text FROM rules WHERE NOT rules.late AND NOT rules.locked
     ON CONFLICT (task_id, user_id) DO UPDATE SET content = EXCLUDED.content, last_updated_at = now()::timestamptz(3)
     RETURNING ${SUBMISSION_COLUMNS}
   )
   SELECT rules.late, rules.locked, rules.role, saved.*,
          ${attachmentsJsonSql('submission_attachments', 'submission_id', 'saved.id')} AS attachments
     FROM rules LEFT JOIN saved ON true`,
);

const EXPORT_SQL = `SELECT ${DISPLAY_NAME} AS "displayName", sc.name AS "schoolName", u.student_id AS "studentId",
       c.name AS "className", t.title, s.first_submitted_at AS "firstSubmittedAt",
       s.last_updated_at AS "lastUpdatedAt", s.score
  ${ROSTER_FROM}
  ${ROSTER_ORDER}`;

/** A grade became visible to its submitter; the release time in the recipient's time zone. */
export const GRADE_RELEASED = defineNotificationType({
  name: 'GRADE_RELEASED',
  subject: 'task',
  texts: ({ releasedAt }: Record<'releasedAt', string>) => ({
    title: `format('Grade released: %s', t.title)`,
    content: `format('Your grade for "%s" in %s was released %s.', t.title, c.name, ${localTime(releasedAt)})`,
  }),
});

/**
 * GRADE_RELEASED to the submitters of the released submissions `$1`, while they are active members of the
 * class. The unique key (task, submitter) of GRADE_RELEASED makes it once per submission, whoever releases it
 * and however often.
 */
const GRADES_RELEASED = compileFanOut({
  type: GRADE_RELEASED,
  from: 'submissions s',
  subject: { task: 's.task_id' },
  recipients: { user: 's.user_id' },
  where: 's.id = ANY($1::uuid[]) AND s.released_at IS NOT NULL',
  vars: { releasedAt: 's.released_at' },
});

/** Submissions and their attachments. Rows have the entities' property names (columns aliased). */
const MINE = `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE s.task_id = $1 AND s.user_id = $2`;

@Injectable()
export class SubmissionsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifier: Notifier,
  ) {}

  /** GRADE_RELEASED for the submissions `submissionIds` just released, in their transaction `db`. */
  async notifyReleased(db: Db, submissionIds: string[]): Promise<void> {
    if (submissionIds.length > 0) await this.notifier.produce(db, GRADES_RELEASED, [submissionIds]);
  }

  /** The one-statement PUT (see UPSERT_MINE); null unless the caller is a member who may see the task. */
  upsertMine(
    taskId: string,
    userId: string,
    content: string | null,
    db: Db = this.dataSource,
  ): Promise<UpsertRow | null> {
    return one<UpsertRow>(db, UPSERT_MINE, [taskId, userId, content]);
  }

  findMine(db: Db, taskId: string, userId: string): Promise<SubmissionRow | null> {
    return one<SubmissionRow>(db, MINE, [taskId, userId]);
  }

  /** The caller's submission locked FOR UPDATE until `tx` ends. */
  lockMine(tx: Tx, taskId: string, userId: string): Promise<SubmissionRow | null> {
    return one<SubmissionRow>(tx, `${MINE} FOR UPDATE`, [taskId, userId]);
  }

  findInTask(db: Db, taskId: string, submissionId: string): Promise<SubmissionRow | null> {
    return one<SubmissionRow>(
      db,
      `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE s.id = $1 AND s.task_id = $2`,
      [submissionId, taskId],
    );
  }

  /** Upload order. */
  attachments(db: Db, submissionId: string): Promise<SubmissionAttachment[]> {
    return rows<SubmissionAttachment>(
      db,
      `SELECT ${ATTACHMENT_COLUMNS} FROM submission_attachments a WHERE a.submission_id = $1 ORDER BY ${ATTACHMENT_ORDER}`,
      [submissionId],
    );
  }

  /**
   * The write rules for the submission of `userId`, written by a caller of class `role`; the task row
   * share-locked until the transaction ends. Null when the task is gone or deleted.
   */
  writeRules(db: Db, taskId: string, userId: string, role: ClassRole): Promise<SubmissionWriteRules | null> {
    return one<SubmissionWriteRules>(
      db,
      `SELECT ${submissionWriteRulesSql('t', '$3::text', '$2')}
         FROM tasks t
        WHERE t.id = $1 AND t.deleted_at IS NULL
        FOR SHARE OF t`,
      [taskId, userId, role],
    );
  }

  /** The user's submission (created empty when there is none) with its update time moved; its id. */
  async touchMine(db: Db, taskId: string, userId: string): Promise<string> {
    const row = await one<{ id: string }>(
      db,
      `INSERT INTO submissions (task_id, user_id) VALUES ($1, $2)
           ON CONFLICT (task_id, user_id) DO UPDATE SET last_updated_at = now()::timestamptz(3)
           RETURNING id`,
      [taskId, userId],
    );
    return row!.id;
  }

  async countAttachments(db: Db, submissionId: string): Promise<number> {
    const row = await one<{ count: number }>(
      db,
      `SELECT count(*)::int AS count FROM submission_attachments WHERE submission_id = $1`,
      [submissionId],
    );
    return row!.count;
  }

  async addAttachment(
    db: Db,
    submissionId: string,
    file: NewSubmissionAttachment,
  ): Promise<SubmissionAttachment> {
    const row = await one<SubmissionAttachment>(
      db,
      `INSERT INTO submission_attachments AS a (submission_id, file_key, original_name, mime_type, size_bytes)
           VALUES ($1, $2, $3, $4, $5)
           RETURNING ${ATTACHMENT_COLUMNS}`,
      [submissionId, file.fileKey, file.originalName, file.mimeType, file.sizeBytes],
    );
    return row!;
  }

  /** Removes an attachment of the user's submission (its update time moves); its file key, null when none. */
  async removeMyAttachment(
    db: Db,
    taskId: string,
    userId: string,
    attachmentId: string,
  ): Promise<string | null> {
    const row = await one<{ fileKey: string }>(
      db,
      `WITH gone AS (
           DELETE FROM submission_attachments a USING submissions s
            WHERE a.id = $3 AND a.submission_id = s.id AND s.task_id = $1 AND s.user_id = $2
           RETURNING a.submission_id, a.file_key)
         UPDATE submissions s SET last_updated_at = now()::timestamptz(3) FROM gone
          WHERE s.id = gone.submission_id
         RETURNING gone.file_key AS "fileKey"`,
      [taskId, userId, attachmentId],
    );
    return row?.fileKey ?? null;
  }

  /** Every member of the task's class with their submission, in roster order. */
  roster(taskId: string): Promise<RosterRow[]> {
    return rows<RosterRow>(
      this.dataSource,
      `SELECT u.id AS "memberId", u.nickname, u.email, sc.name AS "schoolName", u.student_id AS "studentId", m.role,
              ${SUBMISSION_SUMMARY_COLUMNS}
       ${ROSTER_FROM}
       ${ROSTER_ORDER}`,
      [taskId],
    );
  }

  /** The attachments of all submissions of the task, in upload order. */
  taskAttachments(taskId: string): Promise<SubmissionAttachment[]> {
    return rows<SubmissionAttachment>(
      this.dataSource,
      `SELECT ${ATTACHMENT_COLUMNS} FROM submission_attachments a JOIN submissions s ON s.id = a.submission_id
        WHERE s.task_id = $1 ORDER BY ${ATTACHMENT_ORDER}`,
      [taskId],
    );
  }

  /**
   * Changes only the fields given; reviewer and review time always move. Null when the task has no such
   * submission; "exemplary needs a score" is the table's check constraint (see constraint-errors). The task row
   * is share-locked before the submission row (the order of a task update that releases grades), so a change
   * of the task's grade-release mode waits for this grade, or this grade reads the changed mode.
   */
  grade(db: Db, taskId: string, submissionId: string, grade: Grade): Promise<GradedRow | null> {
    return withConstraintErrors(() =>
      one<GradedRow>(
        db,
        `WITH task AS (SELECT t.grade_release FROM tasks t WHERE t.id = $2 FOR SHARE)
         UPDATE submissions s SET
            score = CASE WHEN $3 THEN $4::numeric ELSE s.score END,
            feedback = CASE WHEN $5 THEN $6 ELSE s.feedback END,
            is_exemplary = COALESCE($7, s.is_exemplary),
            reviewer_id = $8,
            reviewed_at = now()::timestamptz(3)
           FROM task
          WHERE s.id = $1 AND s.task_id = $2
          RETURNING ${SUBMISSION_COLUMNS}, task.grade_release AS "gradeRelease"`,
        [
          submissionId,
          taskId,
          grade.score !== undefined,
          grade.score ?? null,
          grade.feedback !== undefined,
          grade.feedback ?? null,
          grade.isExemplary ?? null,
          grade.reviewerId,
        ],
      ),
    );
  }

  /**
   * Sets only the exemplary flag (grader and review time stay), or toggles it when `isExemplary` is null (under
   * the row lock, so concurrent toggles apply one after the other); null when the task has no such submission.
   */
  setExemplary(
    db: Db,
    taskId: string,
    submissionId: string,
    isExemplary: boolean | null,
  ): Promise<SubmissionRow | null> {
    return withConstraintErrors(() =>
      one<SubmissionRow>(
        db,
        `UPDATE submissions s SET is_exemplary = coalesce($3::boolean, NOT s.is_exemplary)
          WHERE s.id = $1 AND s.task_id = $2
          RETURNING ${SUBMISSION_COLUMNS}`,
        [submissionId, taskId, isExemplary],
      ),
    );
  }

  /**
   * Releases the graded, unreleased submissions of the task in `scope`; those this call released.
   * The rows are locked in id order (no deadlock between releases of overlapping sets); a row another
   * transaction released meanwhile is re-checked after the wait and left out, so each is released once.
   */
  release(db: Db, taskId: string, scope: ReleaseScope): Promise<ReleasedRow[]> {
    return rows<ReleasedRow>(
      db,
      `WITH due AS (
         SELECT s.id FROM submissions s
          WHERE s.task_id = $1 AND s.released_at IS NULL AND ${GRADED}
            AND ($2::uuid[] IS NULL OR s.user_id = ANY($2::uuid[]))
            AND ($3::uuid IS NULL OR s.id = $3::uuid)
          ORDER BY s.id
          FOR UPDATE
       )
       UPDATE submissions s SET released_at = now()::timestamptz(3) FROM due WHERE s.id = due.id
       RETURNING s.id, s.released_at AS "releasedAt"`,
      [taskId, scope.userIds ?? null, scope.submissionId ?? null],
    );
  }

  /** The export's rows from a cursor on `client`, `batchSize` rows per round trip. */
  exportRows(client: PoolClient, taskId: string, batchSize: number): QueryStream {
    return client.query(new QueryStream(EXPORT_SQL, [taskId], { batchSize }));
  }
}
