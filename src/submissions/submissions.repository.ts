import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import { DataSource } from 'typeorm';
import { SubmissionWriteRules } from '../access/submission-rules';
import {
  memberDeadlineSql,
  roleSeesTaskSql,
  submissionWriteRulesSql,
  submittedLateSql,
} from '../access/task-rules.sql';
import { KeysetPlace, keysetAfterSql, keysetPositionSql } from '../common/pagination/keyset';
import { roleRankSql } from '../classes/classes.repository';
import { ClassRole } from '../classes/entities/class-member.entity';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { Db, one, Prepared, rows } from '../database/sql';
import { compileFanOut } from '../notifications/production/notification-fan-out';
import { defineNotificationType, localTime } from '../notifications/production/notification-types';
import { Notifier } from '../notifications/production/notifier';
import { AttachmentJson, attachmentsJsonSql } from '../files/attachments.sql';
import { SubmissionAttachment } from './entities/submission-attachment.entity';
import { Submission, SubmissionStatus } from './entities/submission.entity';
import { GradeRelease } from './grade-release';
import { Tx } from '../database/transactions';

/** One criterion of a rubric assessment as the queries read it (JSON: `points` is a number). */
export interface RubricAssessmentJson {
  criterionId: string;
  levelId: string;
  points: number;
  comment: string | null;
}

/**
 * A submission as the queries read it: the row with `isLate` (submitted after the submitter's deadline), judged
 * when read, and its rubric assessment (null when none), in the rubric's criterion order.
 */
export type SubmissionRow = Submission & {
  isLate: boolean;
  rubricAssessment: RubricAssessmentJson[] | null;
};

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

/** The submission a write by its submitter went to, and the version it wrote. */
export interface WrittenVersion {
  id: string;
  version: number;
}

/** An attachment removed from the current version: its file key, and whether an older version keeps the file. */
export interface RemovedAttachment {
  fileKey: string;
  kept: boolean;
}

/** One version of a submission, as the versions list reads it. */
export interface VersionRow {
  id: string;
  version: number;
  content: string | null;
  submittedAt: Date;
  isLate: boolean;
  position: string;
  attachments: AttachmentJson[];
}

export interface Grade {
  score?: number | null;
  feedback?: string | null;
  isExemplary?: boolean;
  reviewerId: string;
}

/** One criterion of a rubric assessment as a grading gives it. */
export interface AssessmentWrite {
  criterionId: string;
  levelId: string;
  comment: string | null;
}

/**
 * What an assessment write found: whether the task has a rubric, how many entries named its parts; the
 * assessment written, and the submission's score after it.
 */
export interface AssessedRow {
  hasRubric: boolean;
  matched: number;
  assessment: RubricAssessmentJson[] | null;
  score: string | null;
  isExemplary: boolean;
}

/** The score a rubric assessment gives: the sum of its levels' points, with the grading's exemplary mark. */
export interface ScoreFromLevels {
  isExemplary: boolean | null;
}

/**
 * SQL fragments shared by the submission queries. Columns are aliased to the entity property names, so a
 * raw row has the shape of `Submission` / `SubmissionAttachment`.
 */
/** The assessment entries `a` of a submission as JSON, in the order of the rubric's criteria `c`. */
const ASSESSMENT_JSON = `jsonb_agg(jsonb_build_object('criterionId', a.criterion_id, 'levelId', a.level_id,
  'points', a.points, 'comment', a.comment) ORDER BY c.position)`;

const SUBMISSION_SUMMARY_COLUMNS = `s.id, s.task_id AS "taskId", s.user_id AS "userId",
  s.first_submitted_at AS "firstSubmittedAt", s.last_updated_at AS "lastUpdatedAt", s.score, s.feedback,
  s.reviewer_id AS "reviewerId", s.reviewed_at AS "reviewedAt", s.is_exemplary AS "isExemplary",
  ${submittedLateSql('s')} AS "isLate", s.released_at AS "releasedAt", s.version,
  s.version_started_at AS "versionStartedAt", s.status,
  (SELECT ${ASSESSMENT_JSON} FROM rubric_assessments a JOIN rubric_criteria c ON c.id = a.criterion_id
    WHERE a.submission_id = s.id) AS "rubricAssessment"`;

const SUBMISSION_COLUMNS = `${SUBMISSION_SUMMARY_COLUMNS}, s.content`;

const ATTACHMENT_COLUMNS = `a.id, a.submission_id AS "submissionId", a.file_key AS "fileKey",
  a.original_name AS "originalName", a.mime_type AS "mimeType", a.size_bytes AS "sizeBytes",
  a.created_at AS "createdAt", a.added_version AS "addedVersion"`;

const ATTACHMENT_ORDER = 'a.created_at, a.id';

/** A submission has a grade to show once it has a score, feedback or a rubric assessment (alias `s` = submissions). */
const GRADED = `(s.score IS NOT NULL OR s.feedback IS NOT NULL
  OR EXISTS (SELECT 1 FROM rubric_assessments ra WHERE ra.submission_id = s.id))`;

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
 * Whether a write by the submitter of submission `s` starts a new version rather than amending the current one:
 * the first write after a return does, and so does any write once the amend window (`window`, SQL of the
 * seconds; 0 = every write) since the current version's start has passed. Judged on the row as locked by the
 * write, so concurrent writes of one submitter number their versions one after the other.
 */
const startsVersionSql = (window: string): string =>
  `(s.status = '${SubmissionStatus.RETURNED}' OR ${window}::int = 0
    OR now() >= s.version_started_at + ${window}::int * interval '1 second')`;

/** The `SET` list of a write by the submitter to their existing submission `s`: a new version or an amendment. */
const versionedWriteSql = (window: string): string =>
  `last_updated_at = now()::timestamptz(3),
   version = s.version + CASE WHEN ${startsVersionSql(window)} THEN 1 ELSE 0 END,
   version_started_at = CASE WHEN ${startsVersionSql(window)} THEN now()::timestamptz(3) ELSE s.version_started_at END,
   status = CASE WHEN s.status = '${SubmissionStatus.RETURNED}' THEN '${SubmissionStatus.RESUBMITTED}' ELSE s.status END`;

/**
 * The version row of the submission a write just saved (`saved`: `id`, `version`, `content`, `lastUpdatedAt`),
 * created or amended: the current version's content as of this write. The (submission, version) key is unique,
 * so two versions never share a number.
 */
const recordVersionSql = (saved: string): string =>
  `INSERT INTO submission_versions (submission_id, version, content, submitted_at)
   SELECT ${saved}.id, ${saved}.version, ${saved}.content, ${saved}."lastUpdatedAt" FROM ${saved}
   ON CONFLICT (submission_id, version) DO UPDATE
     SET content = EXCLUDED.content, submitted_at = EXCLUDED.submitted_at`;

/** The submission of user `userId` to task `task` is RETURNED: the deadline does not hold them back. */
const returnedSql = (task: string, userId: string): string =>
  `EXISTS (SELECT 1 FROM submissions rs
            WHERE rs.task_id = ${task}.id AND rs.user_id = ${userId} AND rs.status = '${SubmissionStatus.RETURNED}')`;

/**
 * PUT of the caller's submission as one prepared statement (its own transaction): the task row is
 * share-locked while the rules are judged and the row is upserted, as `SubmissionsService.writeMine` does in a
 * transaction (the lock rule for MEMBERs only). No row unless the caller is a member who may see the task; the
 * submission columns are null when a rule refused the write. A returned submission may be written past the
 * deadline once: the return is checked again on the row as locked (`WHERE` of the update), so of two
 * concurrent writes after a return only the first gets past a closed deadline. `$4`: the amend window.
 */
const UPSERT_MINE = new Prepared(
  'submissions.upsert_mine',
  `WITH rules AS (
     SELECT ${submissionWriteRulesSql('t', 'm.role', '$2')}, m.role, ${returnedSql('t', '$2')} AS returned
       FROM tasks t
       JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $2
      WHERE t.id = $1 AND t.deleted_at IS NULL AND ${roleSeesTaskSql('t', 'm.role')}
        FOR SHARE OF t
   ), saved AS (
     INSERT INTO submissions AS s (task_id, user_id, content)
     SELECT $1::uuid, $2::uuid, $3::text FROM rules
      WHERE NOT rules.locked AND (NOT rules.late OR rules.returned)
     ON CONFLICT (task_id, user_id) DO UPDATE SET content = EXCLUDED.content, ${versionedWriteSql('$4')}
      WHERE s.status = '${SubmissionStatus.RETURNED}' OR NOT (SELECT rules.late FROM rules)
     RETURNING ${SUBMISSION_COLUMNS}
   ), recorded AS (${recordVersionSql('saved')})
   SELECT rules.late AND NOT (rules.returned AND (saved.id IS NOT NULL OR rules.locked)) AS late, rules.locked,
          rules.role, saved.*,
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

/** A submission was handed back for revision; the return time in the recipient's time zone. */
export const SUBMISSION_RETURNED = defineNotificationType({
  name: 'SUBMISSION_RETURNED',
  subject: 'task',
  texts: ({ returnedAt }: Record<'returnedAt', string>) => ({
    title: `format('Returned for revision: %s', t.title)`,
    content: `format('Your submission for "%s" in %s was returned for revision %s. You can change it and submit it again, even after the deadline.', t.title, c.name, ${localTime(returnedAt)})`,
  }),
});

/**
 * SUBMISSION_RETURNED to the submitter of the submission `$1` just returned by `$2`, while an active member of
 * the class who sees the task. Once per return: a return is a change of status that only one transaction
 * makes, and it runs in that transaction.
 */
const RETURNED = compileFanOut({
  type: SUBMISSION_RETURNED,
  from: 'submissions s',
  subject: { task: 's.task_id' },
  recipients: { user: 's.user_id' },
  actor: '$2::uuid',
  where: `s.id = $1 AND s.status = '${SubmissionStatus.RETURNED}'`,
  vars: { returnedAt: 'now()' },
  data: `jsonb_build_object('submissionId', s.id, 'version', s.version)`,
});

/** Aliases `v` = submission_versions, `s` its submission: the attachments version `v` holds, as JSON. */
const VERSION_ATTACHMENTS = attachmentsJsonSql(
  `(SELECT c.* FROM (
      SELECT sa.id, sa.submission_id, sa.file_key, sa.original_name, sa.mime_type, sa.size_bytes, sa.created_at,
             sa.added_version, NULL::int AS removed_version
        FROM submission_attachments sa
      UNION ALL
      SELECT h.id, h.submission_id, h.file_key, h.original_name, h.mime_type, h.size_bytes, h.created_at,
             h.added_version, h.removed_version
        FROM submission_attachment_history h) c
     WHERE c.submission_id = v.submission_id AND c.added_version <= v.version
       AND (c.removed_version IS NULL OR c.removed_version > v.version))`,
  'submission_id',
  'v.submission_id',
);

/** A version's place in its list: its number (a count of microseconds after the epoch, for the keyset helper). */
const VERSION_PLACE = `('epoch'::timestamptz + v.version * interval '1 microsecond')`;

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
    versionWindowSeconds: number,
    db: Db = this.dataSource,
  ): Promise<UpsertRow | null> {
    return one<UpsertRow>(db, UPSERT_MINE, [taskId, userId, content, versionWindowSeconds]);
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

  /**
   * The status of the user's submission, its row locked FOR UPDATE until `tx` ends (so no return or other
   * write of it comes between the rules and the write); null when there is none.
   */
  async lockStatus(tx: Tx, taskId: string, userId: string): Promise<SubmissionStatus | null> {
    const row = await one<{ status: SubmissionStatus }>(
      tx,
      `SELECT s.status FROM submissions s WHERE s.task_id = $1 AND s.user_id = $2 FOR UPDATE`,
      [taskId, userId],
    );
    return row?.status ?? null;
  }

  /**
   * A write by the user to their submission (created empty when there is none): a new version or an amendment
   * of the current one (`versionWindowSeconds`), recorded; its id and version.
   */
  async touchMine(
    db: Db,
    taskId: string,
    userId: string,
    versionWindowSeconds: number,
  ): Promise<WrittenVersion> {
    const row = await one<WrittenVersion>(
      db,
      `WITH saved AS (
         INSERT INTO submissions AS s (task_id, user_id) VALUES ($1, $2)
         ON CONFLICT (task_id, user_id) DO UPDATE SET ${versionedWriteSql('$3')}
         RETURNING s.id, s.version, s.content, s.last_updated_at AS "lastUpdatedAt"
       ), recorded AS (${recordVersionSql('saved')})
       SELECT saved.id, saved.version FROM saved`,
      [taskId, userId, versionWindowSeconds],
    );
    return row!;
  }

  /**
   * A write by the user to their existing submission, as `touchMine`; null when they have none.
   */
  reviseMine(
    db: Db,
    taskId: string,
    userId: string,
    versionWindowSeconds: number,
  ): Promise<WrittenVersion | null> {
    return one<WrittenVersion>(
      db,
      `WITH saved AS (
         UPDATE submissions s SET ${versionedWriteSql('$3')}
          WHERE s.task_id = $1 AND s.user_id = $2
         RETURNING s.id, s.version, s.content, s.last_updated_at AS "lastUpdatedAt"
       ), recorded AS (${recordVersionSql('saved')})
       SELECT saved.id, saved.version FROM saved`,
      [taskId, userId, versionWindowSeconds],
    );
  }

  async countAttachments(db: Db, submissionId: string): Promise<number> {
    const row = await one<{ count: number }>(
      db,
      `SELECT count(*)::int AS count FROM submission_attachments WHERE submission_id = $1`,
      [submissionId],
    );
    return row!.count;
  }

  /** Adds an attachment to the current version `version` of the submission. */
  async addAttachment(
    db: Db,
    { id: submissionId, version }: WrittenVersion,
    file: NewSubmissionAttachment,
  ): Promise<SubmissionAttachment> {
    const row = await one<SubmissionAttachment>(
      db,
      `INSERT INTO submission_attachments AS a (submission_id, file_key, original_name, mime_type, size_bytes,
                                                added_version)
           VALUES ($1, $2, $3, $4, $5, $6)
           RETURNING ${ATTACHMENT_COLUMNS}`,
      [submissionId, file.fileKey, file.originalName, file.mimeType, file.sizeBytes, version],
    );
    return row!;
  }

  /**
   * Removes attachment `attachmentId` from the current version `version` of submission `submissionId`; null when
   * it has no such attachment. One an older version holds (added before `version`) moves to the history with
   * its file, which stays (`kept`); one added in this version goes, and its file may be removed.
   */
  removeAttachment(
    db: Db,
    submissionId: string,
    version: number,
    attachmentId: string,
  ): Promise<RemovedAttachment | null> {
    return one<RemovedAttachment>(
      db,
      `WITH gone AS (
         DELETE FROM submission_attachments a WHERE a.id = $3 AND a.submission_id = $1
         RETURNING a.*
       ), kept AS (
         INSERT INTO submission_attachment_history (id, submission_id, file_key, original_name, mime_type, size_bytes,
                                                    created_at, added_version, removed_version)
         SELECT gone.id, gone.submission_id, gone.file_key, gone.original_name, gone.mime_type, gone.size_bytes,
                gone.created_at, gone.added_version, $2
           FROM gone WHERE gone.added_version < $2
       )
       SELECT gone.file_key AS "fileKey", gone.added_version < $2 AS kept FROM gone`,
      [submissionId, version, attachmentId],
    );
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
   * Makes `entries` the whole rubric assessment of the submission (none: cleared), after `grade` locked the
   * task and the submission in `tx`: a rubric replacement, which locks the task row first, waits for this
   * transaction, or this statement, which starts after the locks were granted, reads the replaced rubric.
   * Each entry's level must be one of its criterion's in the task's rubric; an entry that names none is not
   * written and not counted in `matched` (the caller then refuses the grading, rolling it back). The points
   * are the levels' as this statement reads them; with `scoreFromLevels` the score becomes their sum, and the
   * grading's exemplary mark is set with it (it needs the score: the table's check constraint).
   */
  async assess(
    tx: Tx,
    taskId: string,
    submissionId: string,
    entries: AssessmentWrite[],
    scoreFromLevels: ScoreFromLevels | null,
  ): Promise<AssessedRow> {
    const row = await withConstraintErrors(() =>
      one<AssessedRow>(
        tx,
        `WITH given AS (
         SELECT * FROM unnest($3::uuid[], $4::uuid[], $5::text[]) AS g(criterion_id, level_id, comment)
       ), chosen AS (
         SELECT c.id AS criterion_id, l.id AS level_id, l.points, g.comment
           FROM given g
           JOIN rubric_criteria c ON c.id = g.criterion_id AND c.task_id = $2
           JOIN rubric_levels l ON l.id = g.level_id AND l.criterion_id = c.id
       ), cleared AS (
         DELETE FROM rubric_assessments a
          WHERE a.submission_id = $1 AND a.criterion_id NOT IN (SELECT criterion_id FROM chosen)
       ), saved AS (
         INSERT INTO rubric_assessments AS a (submission_id, task_id, criterion_id, level_id, points, comment)
         SELECT $1, $2, criterion_id, level_id, points, comment FROM chosen
         ON CONFLICT (submission_id, criterion_id) DO UPDATE
            SET level_id = EXCLUDED.level_id, points = EXCLUDED.points, comment = EXCLUDED.comment
         RETURNING a.criterion_id, a.level_id, a.points, a.comment
       ), scored AS (
         UPDATE submissions s SET score = (SELECT sum(points) FROM chosen),
                                  is_exemplary = COALESCE($7::boolean, s.is_exemplary)
          WHERE s.id = $1 AND $6::boolean
         RETURNING s.score, s.is_exemplary
       ), current AS (
         SELECT s.score, s.is_exemplary FROM submissions s WHERE s.id = $1 AND NOT $6::boolean
         UNION ALL
         SELECT score, is_exemplary FROM scored
       )
       SELECT (SELECT t.rubric_max_points IS NOT NULL FROM tasks t WHERE t.id = $2) AS "hasRubric",
              (SELECT count(*)::int FROM chosen) AS matched,
              (SELECT ${ASSESSMENT_JSON} FROM saved a JOIN rubric_criteria c ON c.id = a.criterion_id)
                AS assessment,
              (SELECT score FROM current) AS score, (SELECT is_exemplary FROM current) AS "isExemplary"`,
        [
          submissionId,
          taskId,
          entries.map((entry) => entry.criterionId),
          entries.map((entry) => entry.levelId),
          entries.map((entry) => entry.comment),
          scoreFromLevels !== null,
          scoreFromLevels?.isExemplary ?? null,
        ],
      ),
    );
    return row!;
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

  /** SUBMISSION_RETURNED for submission `submissionId` just returned by `returnerId`, in its transaction. */
  async notifyReturned(tx: Tx, submissionId: string, returnerId: string): Promise<void> {
    await this.notifier.produce(tx, RETURNED, [submissionId, returnerId]);
  }

  /**
   * Returns submission `submissionId` of the task for revision, unless it is RETURNED already; `feedback`, when
   * given, becomes its feedback (the returner then its reviewer). Null when no row changed. The task row is
   * share-locked first, as grading does.
   */
  returnForRevision(
    tx: Tx,
    taskId: string,
    submissionId: string,
    returnerId: string,
    feedback: string | null | undefined,
  ): Promise<GradedRow | null> {
    return one<GradedRow>(
      tx,
      `WITH task AS (SELECT t.grade_release FROM tasks t WHERE t.id = $2 FOR SHARE)
       UPDATE submissions s SET
          status = '${SubmissionStatus.RETURNED}',
          feedback = CASE WHEN $3 THEN $4 ELSE s.feedback END,
          reviewer_id = CASE WHEN $3 THEN $5::uuid ELSE s.reviewer_id END,
          reviewed_at = CASE WHEN $3 THEN now()::timestamptz(3) ELSE s.reviewed_at END
         FROM task
        WHERE s.id = $1 AND s.task_id = $2 AND s.status <> '${SubmissionStatus.RETURNED}'
        RETURNING ${SUBMISSION_COLUMNS}, task.grade_release AS "gradeRelease"`,
      [submissionId, taskId, feedback !== undefined, feedback ?? null, returnerId],
    );
  }

  /** The submitter of submission `submissionId` of the task; null when the task has no such submission. */
  async submitterOf(taskId: string, submissionId: string): Promise<string | null> {
    const row = await one<{ userId: string }>(
      this.dataSource,
      `SELECT s.user_id AS "userId" FROM submissions s WHERE s.id = $1 AND s.task_id = $2`,
      [submissionId, taskId],
    );
    return row?.userId ?? null;
  }

  /**
   * `limit` versions of submission `submissionId`, newest first, after `after` when given; each with the
   * attachments it held and whether it was written after its submitter's deadline as it stands now.
   */
  versionsPage(submissionId: string, after: KeysetPlace | null, limit: number): Promise<VersionRow[]> {
    return rows<VersionRow>(
      this.dataSource,
      `SELECT v.id, v.version, v.content, v.submitted_at AS "submittedAt",
              coalesce(v.submitted_at > deadline.due_at, false) AS "isLate",
              ${keysetPositionSql(VERSION_PLACE)} AS position,
              ${VERSION_ATTACHMENTS} AS attachments
         FROM submission_versions v
         JOIN submissions s ON s.id = v.submission_id
         JOIN tasks t ON t.id = s.task_id
        CROSS JOIN LATERAL ${memberDeadlineSql('t', 's.user_id')} deadline
        WHERE v.submission_id = $1
              ${after ? `AND ${keysetAfterSql(VERSION_PLACE, 'v.id', 'desc', { micros: 3, id: 4 })}` : ''}
        ORDER BY v.version DESC, v.id DESC
        LIMIT $2`,
      after ? [submissionId, limit, after.micros, after.id] : [submissionId, limit],
    );
  }

  /** The export's rows from a cursor on `client`, `batchSize` rows per round trip. */
  exportRows(client: PoolClient, taskId: string, batchSize: number): QueryStream {
    return client.query(new QueryStream(EXPORT_SQL, [taskId], { batchSize }));
  }
}
