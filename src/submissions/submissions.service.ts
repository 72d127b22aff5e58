import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AccessService } from '../access/access.service';
import { blockedForUserSql, roleSeesTaskSql, taskLockedSql } from '../access/task-rules.sql';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { createValidationPipe } from '../common/errors/validation';
import { pgConstraint } from '../common/utils/pg-errors';
import { PreparedStatement } from '../database/prepared-statement';
import {
  AttachmentJson,
  AttachmentResponse,
  attachmentsJsonSql,
  storedAttachmentFromJson,
  toAttachmentResponse,
} from '../files/attachment.response';
import { FileStorage } from '../files/file-storage';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { uploadMetadata } from '../files/upload-metadata';
import { GradeSubmissionDto } from './dto/grade-submission.dto';
import { UpsertSubmissionDto } from './dto/upsert-submission.dto';
import { SubmissionListEntryResponse, SubmissionResponse } from './dto/submission.response';
import { SubmissionAttachment } from './entities/submission-attachment.entity';
import { Submission } from './entities/submission.entity';
import { RosterRow, toListEntryResponse, toSubmissionResponse } from './submissions.mapper';
import {
  ATTACHMENT_COLUMNS,
  ATTACHMENT_ORDER,
  ROSTER_FROM,
  ROSTER_ORDER,
  SUBMISSION_COLUMNS,
  SUBMISSION_SUMMARY_COLUMNS,
} from './submissions.sql';

/** The global validation pipe, for a body that is judged after the access check. */
const BODY_PIPE = createValidationPipe();

/** A bound on the attachment list of one submission (as for a task). */
export const ATTACHMENTS_PER_SUBMISSION_MAX = 50;

/** TypeORM answers UPDATE and DELETE with [rows, affected count]. */
type UpdateResult<T> = [T[], number];

/** The late rule over the task row `t`, judged by the database clock: a write at exactly dueAt is in time. */
const LATE_SQL = `(NOT t.allow_late_submission AND t.due_at IS NOT NULL AND t.due_at < now())`;

interface WriteRules {
  late: boolean;
  locked: boolean;
}

/** When both rules apply, LATE_SUBMISSION_CLOSED wins: unlocking would not help any more. */
function assertWriteRules(rules: WriteRules): void {
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

type UpsertRow = WriteRules & { [K in keyof Submission]: Submission[K] | null } & {
  attachments: AttachmentJson[] | null;
};

/**
 * PUT of the caller's submission as one prepared statement (its own transaction): the task row is
 * share-locked while the rules are judged and the row is upserted, as `writeMine` does in a transaction (the
 * lock rule for MEMBERs only). No row unless the caller is a member who may see the task; the submission
 * columns are null when a rule refused the write.
 */
const UPSERT_MINE = new PreparedStatement<UpsertRow>(
  'submissions.upsert_mine',
  `WITH rules AS (
     SELECT ${LATE_SQL} AS late, ${taskLockedSql('t', 'm.role', '$2')} AS locked
       FROM tasks t
       JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $2
      WHERE t.id = $1 AND t.deleted_at IS NULL AND ${roleSeesTaskSql('t', 'm.role')}
        FOR SHARE OF t
   ), saved AS (
     INSERT INTO submissions AS s (task_id, user_id, content)
     SELECT $1::uuid, $2::uuid, $3::text FROM rules WHERE NOT rules.late AND NOT rules.locked
     ON CONFLICT (task_id, user_id) DO UPDATE SET content = EXCLUDED.content, last_updated_at = now()
     RETURNING ${SUBMISSION_COLUMNS}
   )
   SELECT rules.late, rules.locked, saved.*,
          ${attachmentsJsonSql('submission_attachments', 'submission_id', 'saved.id')} AS attachments
     FROM rules LEFT JOIN saved ON true`,
);

@Injectable()
export class SubmissionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
  ) {}

  async getMine(taskId: string, userId: string): Promise<SubmissionResponse> {
    await this.access.requireTaskAccess(taskId, userId);
    const [submission] = await this.dataSource.query<Submission[]>(
      `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE s.task_id = $1 AND s.user_id = $2`,
      [taskId, userId],
    );
    if (!submission) throw AppError.notFound('Submission');
    return this.withAttachments(this.dataSource.manager, submission);
  }

  /**
   * One row per (task, user) whatever the concurrency: the unique constraint decides insert or update. One
   * statement when the caller may see the task; otherwise AccessService tells why not (404, 403), and a
   * task that became visible meanwhile is written by a second try.
   */
  async upsertMine(taskId: string, userId: string, body: unknown): Promise<SubmissionResponse> {
    const { content } = await this.upsertBody(taskId, userId, body);
    let [row] = await UPSERT_MINE.rows(this.dataSource, [taskId, userId, content]);
    if (!row) {
      await this.access.requireTaskAccess(taskId, userId);
      [row] = await UPSERT_MINE.rows(this.dataSource, [taskId, userId, content]);
      if (!row) throw AppError.notFound('Task');
    }
    assertWriteRules(row);
    return toSubmissionResponse(row as Submission, (row.attachments ?? []).map(storedAttachmentFromJson));
  }

  /**
   * The PUT body, judged by the global pipe's rules after access: a caller who may not write here is told so
   * (404, 403), not how to fix the body. Access is asked only for an invalid body, so a valid PUT stays one
   * statement.
   */
  private async upsertBody(taskId: string, userId: string, body: unknown): Promise<UpsertSubmissionDto> {
    try {
      return (await BODY_PIPE.transform(body, {
        type: 'body',
        metatype: UpsertSubmissionDto,
      })) as UpsertSubmissionDto;
    } catch (error) {
      await this.access.requireTaskAccess(taskId, userId);
      throw error;
    }
  }

  /**
   * The file is already stored when this runs; it is removed again unless its row is written. The
   * submission row stays locked from the upsert to the insert, so the attachment count holds.
   */
  async addAttachment(
    taskId: string,
    userId: string,
    file: UploadedFileInfo | undefined,
  ): Promise<AttachmentResponse> {
    try {
      return await this.writeMine(taskId, userId, async (manager) => {
        if (!file) throw AppError.validation('file is required (multipart field "file")');
        const { originalName, mimeType } = uploadMetadata(file);
        const [submission] = await manager.query<{ id: string }[]>(
          `INSERT INTO submissions (task_id, user_id) VALUES ($1, $2)
           ON CONFLICT (task_id, user_id) DO UPDATE SET last_updated_at = now()
           RETURNING id`,
          [taskId, userId],
        );
        const [{ count }] = await manager.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM submission_attachments WHERE submission_id = $1`,
          [submission.id],
        );
        if (count >= ATTACHMENTS_PER_SUBMISSION_MAX) {
          throw AppError.validation(`A submission has at most ${ATTACHMENTS_PER_SUBMISSION_MAX} attachments`);
        }
        const [attachment] = await manager.query<SubmissionAttachment[]>(
          `INSERT INTO submission_attachments AS a (submission_id, file_key, original_name, mime_type, size_bytes)
           VALUES ($1, $2, $3, $4, $5)
           RETURNING ${ATTACHMENT_COLUMNS}`,
          [submission.id, file.key, originalName, mimeType, file.size],
        );
        return toAttachmentResponse(attachment);
      });
    } catch (error) {
      if (file) await this.storage.discard([file.key], { taskId });
      throw error;
    }
  }

  async removeAttachment(taskId: string, userId: string, attachmentId: string): Promise<void> {
    const fileKey = await this.writeMine(taskId, userId, async (manager) => {
      const [removed] = await manager.query<UpdateResult<{ fileKey: string }>>(
        `WITH gone AS (
           DELETE FROM submission_attachments a USING submissions s
            WHERE a.id = $3 AND a.submission_id = s.id AND s.task_id = $1 AND s.user_id = $2
           RETURNING a.submission_id, a.file_key)
         UPDATE submissions s SET last_updated_at = now() FROM gone
          WHERE s.id = gone.submission_id
         RETURNING gone.file_key AS "fileKey"`,
        [taskId, userId, attachmentId],
      );
      if (removed.length === 0) throw AppError.notFound('Attachment');
      return removed[0].fileKey;
    });
    await this.storage.discard([fileKey], { taskId });
  }

  /** One entry per class member, in a fixed number of queries whatever the class size. */
  async list(taskId: string, userId: string): Promise<SubmissionListEntryResponse[]> {
    await this.access.requireTaskAccess(taskId, userId, { manage: true });
    const rows = await this.dataSource.query<RosterRow[]>(
      `SELECT u.id AS "memberId", u.nickname, u.email, sc.name AS "schoolName", u.student_id AS "studentId", m.role,
              ${SUBMISSION_SUMMARY_COLUMNS}
       ${ROSTER_FROM}
       ${ROSTER_ORDER}`,
      [taskId],
    );
    const attachments = await this.dataSource.query<SubmissionAttachment[]>(
      `SELECT ${ATTACHMENT_COLUMNS} FROM submission_attachments a JOIN submissions s ON s.id = a.submission_id
        WHERE s.task_id = $1 ORDER BY ${ATTACHMENT_ORDER}`,
      [taskId],
    );
    const bySubmission = new Map<string, SubmissionAttachment[]>();
    for (const attachment of attachments) {
      const group = bySubmission.get(attachment.submissionId) ?? [];
      group.push(attachment);
      bySubmission.set(attachment.submissionId, group);
    }
    return rows.map((row) => toListEntryResponse(row, (row.id && bySubmission.get(row.id)) || []));
  }

  async getOne(taskId: string, submissionId: string, userId: string): Promise<SubmissionResponse> {
    await this.access.requireTaskAccess(taskId, userId, { manage: true });
    const [submission] = await this.dataSource.query<Submission[]>(
      `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE s.id = $1 AND s.task_id = $2`,
      [submissionId, taskId],
    );
    if (!submission) throw AppError.notFound('Submission');
    return this.withAttachments(this.dataSource.manager, submission);
  }

  /**
   * Changes only the fields given; reviewer and review time always move. "Exemplary needs a score" is the
   * check constraint of the table, so it holds against concurrent grading too.
   */
  async grade(
    taskId: string,
    submissionId: string,
    graderId: string,
    dto: GradeSubmissionDto,
  ): Promise<SubmissionResponse> {
    // The route's guard answered 404/403 before the body was read; this check holds for any caller.
    await this.access.requireTaskAccess(taskId, graderId, { manage: true });
    if (dto.score === undefined && dto.feedback === undefined && dto.isExemplary === undefined) {
      throw AppError.validation('Give at least one of score, feedback, isExemplary');
    }
    let graded: Submission[];
    try {
      [graded] = await this.dataSource.query<UpdateResult<Submission>>(
        `UPDATE submissions s SET
            score = CASE WHEN $3 THEN $4::numeric ELSE s.score END,
            feedback = CASE WHEN $5 THEN $6 ELSE s.feedback END,
            is_exemplary = COALESCE($7, s.is_exemplary),
            reviewer_id = $8,
            reviewed_at = now()
          WHERE s.id = $1 AND s.task_id = $2
          RETURNING ${SUBMISSION_COLUMNS}`,
        [
          submissionId,
          taskId,
          dto.score !== undefined,
          dto.score ?? null,
          dto.feedback !== undefined,
          dto.feedback ?? null,
          dto.isExemplary ?? null,
          graderId,
        ],
      );
    } catch (error) {
      if (pgConstraint(error) === 'ck_submissions_exemplary_needs_score') {
        throw AppError.validation('isExemplary requires a score');
      }
      throw error;
    }
    if (graded.length === 0) throw AppError.notFound('Submission');
    return this.withAttachments(this.dataSource.manager, graded[0]);
  }

  /**
   * Every write of the caller's submission (content, attachment upload, attachment delete): the late and
   * lock rules and the write run in one transaction.
   */
  private async writeMine<T>(
    taskId: string,
    userId: string,
    write: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    const access = await this.access.requireTaskAccess(taskId, userId);
    return this.dataSource.transaction(async (manager) => {
      await this.enforceWriteRules(manager, taskId, userId, !access.canManage);
      return write(manager);
    });
  }

  /**
   * Late rule and lock rule, judged by the database clock. The task row stays share-locked until commit, so
   * a concurrent change of dueAt, allowLateSubmission or blockedBy waits for this write (or this write reads
   * the changed row). The lock rule applies to MEMBERs only, as `isLocked` of the task (CONTRACT §2).
   */
  private async enforceWriteRules(
    manager: EntityManager,
    taskId: string,
    userId: string,
    lockApplies: boolean,
  ): Promise<void> {
    const [rules] = await manager.query<WriteRules[]>(
      `SELECT ${LATE_SQL} AS late, ($3::boolean AND ${blockedForUserSql('t', '$2')}) AS locked
         FROM tasks t
        WHERE t.id = $1 AND t.deleted_at IS NULL
        FOR SHARE OF t`,
      [taskId, userId, lockApplies],
    );
    if (!rules) throw AppError.notFound('Task');
    assertWriteRules(rules);
  }

  private async withAttachments(manager: EntityManager, submission: Submission): Promise<SubmissionResponse> {
    const attachments = await manager.query<SubmissionAttachment[]>(
      `SELECT ${ATTACHMENT_COLUMNS} FROM submission_attachments a WHERE a.submission_id = $1 ORDER BY ${ATTACHMENT_ORDER}`,
      [submission.id],
    );
    return toSubmissionResponse(submission, attachments);
  }
}
