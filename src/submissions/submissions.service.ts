import { Injectable } from '@nestjs/common';
import { AccessService, TaskAccess } from '../access/access.service';
import { assertSubmissionWritable } from '../access/submission-rules';
import { AppError } from '../common/errors/app-error';
import { createValidationPipe } from '../common/errors/validation';
import { AttachmentResponse, toAttachmentResponse } from '../files/attachment.response';
import { storedAttachmentFromJson } from '../files/attachments.sql';
import { FileStorage } from '../files/file-storage';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { uploadMetadata } from '../files/upload-metadata';
import { GradeSubmissionDto, RubricAssessmentInput } from './dto/grade-submission.dto';
import { ListVersionsQuery, ReturnSubmissionDto, SubmissionVersionsPage } from './dto/submission-history.dto';
import { readKeysetPage } from '../common/pagination/keyset';
import { sameUuid } from '../common/utils/uuid';
import { UpsertSubmissionDto } from './dto/upsert-submission.dto';
import { SubmissionListEntryResponse, SubmissionResponse } from './dto/submission.response';
import { SubmissionAttachment } from './entities/submission-attachment.entity';
import { SubmissionStatus } from './entities/submission.entity';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { GradeRelease, gradeVisibleToSubmitter } from './grade-release';
import { GradeReleases } from './grade-releases.service';
import { toListEntryResponse, toSubmissionResponse, toVersionResponse } from './submissions.mapper';
import { ScoreFromLevels, SubmissionRow, SubmissionsRepository, UpsertRow } from './submissions.repository';
import { assertIfMatch, IfMatchTags } from '../common/http/entity-tags';
import { Db } from '../database/sql';
import { Transactions, Tx } from '../database/transactions';

/** The global validation pipe, for a body that is judged after the access check. */
const BODY_PIPE = createValidationPipe();

/** A bound on the attachment list of one submission (as for a task). */
export const ATTACHMENTS_PER_SUBMISSION_MAX = 50;

@Injectable()
export class SubmissionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
    private readonly submissions: SubmissionsRepository,
    private readonly releases: GradeReleases,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /** The amend window of a submitter's writes (see `SubmissionsRepository.touchMine`). */
  private get versionWindow(): number {
    return this.config.submissions.versionWindowSeconds;
  }

  /** `access`: the route's `@TaskRoute()`, as every method here that takes one. */
  async getMine({ taskId, role }: TaskAccess, userId: string): Promise<SubmissionResponse> {
    const submission = await this.submissions.findMine(this.transactions.autocommit, taskId, userId);
    if (!submission) throw AppError.notFound('Submission');
    return this.withAttachments(gradeVisibleToSubmitter(submission, role));
  }

  /**
   * One row per (task, user) whatever the concurrency: the unique constraint decides insert or update. One
   * statement when the caller may see the task (the statement decides access and the write rules, see
   * `@TaskRoute({ inStatement: true })`); otherwise AccessService tells why not (404, 403), and a task that
   * became visible meanwhile is written by a second try.
   */
  async upsertMine(
    taskId: string,
    userId: string,
    body: unknown,
    ifMatch?: IfMatchTags,
  ): Promise<SubmissionResponse> {
    const { content } = await this.upsertBody(taskId, userId, body);
    if (ifMatch) return this.upsertMineIfMatch(taskId, userId, content, ifMatch);
    const upsert = () =>
      this.transactions.writeOne((db) =>
        this.submissions.upsertMine(taskId, userId, content, this.versionWindow, db),
      );
    let row = await upsert();
    if (!row) {
      await this.access.requireTaskAccess(taskId, userId);
      row = await upsert();
    }
    return upsertResponse(row);
  }

  /**
   * With If-Match: access first (a 412 would tell a stranger that the task exists), then the caller's
   * submission is locked, compared with the tag of what GET submissions/me answers, and written in one
   * transaction. Without a submission nothing is current: any tag, `*` too, answers 412 (RFC 9110).
   */
  private async upsertMineIfMatch(
    taskId: string,
    userId: string,
    content: string | null,
    ifMatch: IfMatchTags,
  ): Promise<SubmissionResponse> {
    const { role } = await this.access.requireTaskAccess(taskId, userId);
    return this.transactions.run(async (manager) => {
      const current = await this.submissions.lockMine(manager, taskId, userId);
      assertIfMatch(
        ifMatch,
        current && (await this.withAttachments(gradeVisibleToSubmitter(current, role), manager)),
      );
      return upsertResponse(
        await this.submissions.upsertMine(taskId, userId, content, this.versionWindow, manager),
      );
    });
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
    access: TaskAccess,
    userId: string,
    file: UploadedFileInfo | undefined,
  ): Promise<AttachmentResponse> {
    const { taskId } = access;
    try {
      return await this.writeMine(access, userId, async (manager) => {
        if (!file) throw AppError.validation('file is required (multipart field "file")');
        const { originalName, mimeType } = uploadMetadata(file);
        const written = await this.submissions.touchMine(manager, taskId, userId, this.versionWindow);
        if (
          (await this.submissions.countAttachments(manager, written.id)) >= ATTACHMENTS_PER_SUBMISSION_MAX
        ) {
          throw AppError.validation(`A submission has at most ${ATTACHMENTS_PER_SUBMISSION_MAX} attachments`);
        }
        const stored = { fileKey: file.key, originalName, mimeType, sizeBytes: file.size };
        return toAttachmentResponse(await this.submissions.addAttachment(manager, written, stored));
      });
    } catch (error) {
      if (file) await this.storage.discard([file.key], { taskId });
      throw error;
    }
  }

  /**
   * The removal is a write of the submission (a new version or an amendment); a file an older version still
   * holds stays stored.
   */
  async removeAttachment(access: TaskAccess, userId: string, attachmentId: string): Promise<void> {
    const { taskId } = access;
    const removed = await this.writeMine(access, userId, async (manager) => {
      const written = await this.submissions.reviseMine(manager, taskId, userId, this.versionWindow);
      const gone =
        written &&
        (await this.submissions.removeAttachment(manager, written.id, written.version, attachmentId));
      // Thrown inside the transaction: a refused removal makes no version.
      if (!gone) throw AppError.notFound('Attachment');
      return gone;
    });
    if (!removed.kept) await this.storage.discard([removed.fileKey], { taskId });
  }

  /** One entry per class member, in a fixed number of queries whatever the class size. */
  async list({ taskId }: TaskAccess): Promise<SubmissionListEntryResponse[]> {
    const rows = await this.submissions.roster(taskId);
    const attachments = await this.submissions.taskAttachments(taskId);
    const bySubmission = new Map<string, SubmissionAttachment[]>();
    for (const attachment of attachments) {
      const group = bySubmission.get(attachment.submissionId) ?? [];
      group.push(attachment);
      bySubmission.set(attachment.submissionId, group);
    }
    return rows.map((row) => toListEntryResponse(row, (row.id && bySubmission.get(row.id)) || []));
  }

  /** OWNER and ADMIN see the grade; a MEMBER (the submitter, `GET /submissions/:id`) only once released. */
  async getOne({ taskId, role }: TaskAccess, submissionId: string): Promise<SubmissionResponse> {
    const submission = await this.submissions.findInTask(this.transactions.autocommit, taskId, submissionId);
    if (!submission) throw AppError.notFound('Submission');
    return this.withAttachments(gradeVisibleToSubmitter(submission, role));
  }

  /**
   * Changes only the fields given; reviewer and review time always move. "Exemplary needs a score" is the
   * check constraint of the table, so it holds against concurrent grading too. A `rubric` replaces the
   * rubric assessment in the same transaction, its score (the sum of the levels' points, unless `score` is
   * given) with it. Under IMMEDIATE the grade is released in the same transaction (GRADE_RELEASED the first
   * time).
   */
  async grade(
    { taskId }: TaskAccess,
    submissionId: string,
    graderId: string,
    dto: GradeSubmissionDto,
  ): Promise<SubmissionResponse> {
    const { score, feedback, isExemplary, rubric } = dto;
    if (score === undefined && feedback === undefined && isExemplary === undefined && rubric === undefined) {
      throw AppError.validation('Give at least one of score, feedback, isExemplary, rubric');
    }
    if (rubric) assertOneEntryPerCriterion(rubric);
    // The levels give the score: the exemplary mark, which needs one, is set with it.
    const scoreFromLevels =
      rubric?.length && score === undefined ? { isExemplary: isExemplary ?? null } : null;
    const graded = await this.transactions.run(async (manager) => {
      const row = await this.submissions.grade(manager, taskId, submissionId, {
        score,
        feedback,
        isExemplary: scoreFromLevels ? undefined : isExemplary,
        reviewerId: graderId,
      });
      if (!row) throw AppError.notFound('Submission');
      const assessed = rubric ? await this.assess(manager, row, rubric, scoreFromLevels) : row;
      if (row.gradeRelease !== GradeRelease.IMMEDIATE) return assessed;
      const [released] = await this.releases.releaseGraded(manager, taskId, { submissionId });
      return released ? { ...assessed, releasedAt: released.releasedAt } : assessed;
    });
    return this.withAttachments(graded);
  }

  /**
   * Writes the grading's rubric assessment of the submission `graded` (locked by the grading), and its score
   * when the grading gave none (the sum of the levels' points; a cleared assessment leaves the score); the row
   * with both. A refusal (no rubric, an entry naming no part of it) rolls the whole grading back.
   */
  private async assess<Row extends SubmissionRow>(
    manager: Tx,
    graded: Row,
    rubric: RubricAssessmentInput[],
    scoreFromLevels: ScoreFromLevels | null,
  ): Promise<Row> {
    const entries = rubric.map(({ criterionId, levelId, comment }) => ({
      criterionId,
      levelId,
      comment: comment ?? null,
    }));
    const result = await this.submissions.assess(manager, graded.taskId, graded.id, entries, scoreFromLevels);
    if (!result.hasRubric) throw AppError.validation('rubric: the task has no rubric');
    if (result.matched !== entries.length) {
      throw AppError.validation(
        "rubric: each criterionId must name a criterion of the task's rubric, and levelId one of its levels",
      );
    }
    const { assessment, score, isExemplary } = result;
    return { ...graded, rubricAssessment: assessment, score, isExemplary };
  }

  /**
   * Hands the submission back for revision (OWNER/ADMIN): its submitter may write it again whatever the
   * deadline, until their next write. A RETURNED one is not returned again (409). Feedback given becomes the
   * submission's, released at once under IMMEDIATE as a grade is; SUBMISSION_RETURNED to the submitter, in the
   * return's transaction.
   */
  async returnForRevision(
    { taskId }: TaskAccess,
    submissionId: string,
    returnerId: string,
    { feedback }: ReturnSubmissionDto,
  ): Promise<SubmissionResponse> {
    const returned = await this.transactions.run(async (manager) => {
      const row = await this.submissions.returnForRevision(
        manager,
        taskId,
        submissionId,
        returnerId,
        feedback,
      );
      if (!row) {
        if (!(await this.submissions.findInTask(manager, taskId, submissionId))) {
          throw AppError.notFound('Submission');
        }
        throw AppError.conflict('The submission is already returned for revision');
      }
      await this.submissions.notifyReturned(manager, submissionId, returnerId);
      if (feedback === undefined || row.gradeRelease !== GradeRelease.IMMEDIATE) return row;
      const [released] = await this.releases.releaseGraded(manager, taskId, { submissionId });
      return released ? { ...row, releasedAt: released.releasedAt } : row;
    });
    return this.withAttachments(returned);
  }

  /**
   * The versions of a submission of the task, newest first: to its submitter and to OWNER and ADMIN (another
   * MEMBER: 403, as for the submission itself).
   */
  async versions(
    { taskId, canManage }: TaskAccess,
    userId: string,
    submissionId: string,
    { cursor, limit }: ListVersionsQuery,
  ): Promise<SubmissionVersionsPage> {
    const submitterId = await this.submissions.submitterOf(taskId, submissionId);
    if (submitterId === null) throw AppError.notFound('Submission');
    if (!canManage && !sameUuid(submitterId, userId)) throw AppError.forbidden();
    const { page, nextCursor } = await readKeysetPage(cursor, limit, (after, rows) =>
      this.submissions.versionsPage(submissionId, after, rows),
    );
    return {
      versions: page.map((row) => toVersionResponse(row, row.attachments.map(storedAttachmentFromJson))),
      nextCursor,
    };
  }

  /**
   * Marks or unmarks the submission as an example; the grade, grader and review time stay. "Exemplary needs a
   * score" is the table's check constraint, as for grading.
   */
  async setExemplary(
    { taskId }: TaskAccess,
    submissionId: string,
    isExemplary: boolean | null,
  ): Promise<SubmissionResponse> {
    const marked = await this.transactions.writeOne((db) =>
      this.submissions.setExemplary(db, taskId, submissionId, isExemplary),
    );
    if (!marked) throw AppError.notFound('Submission');
    return this.withAttachments(marked);
  }

  /**
   * Every write of the caller's submission (attachment upload, attachment delete): the write rules and the
   * write run in one transaction. The task row stays share-locked until commit, so a concurrent change of
   * dueAt, allowLateSubmission or blockedBy waits for this write (or this write reads the changed row). The
   * submission row is locked next (the order of every writer of both), so a return lifts the deadline for
   * exactly the first write that sees it.
   */
  private async writeMine<T>(
    { taskId, role }: TaskAccess,
    userId: string,
    write: (manager: Tx) => Promise<T>,
  ): Promise<T> {
    return this.transactions.run(async (manager) => {
      const rules = await this.submissions.writeRules(manager, taskId, userId, role);
      if (!rules) throw AppError.notFound('Task');
      const status = await this.submissions.lockStatus(manager, taskId, userId);
      assertSubmissionWritable({ ...rules, late: rules.late && status !== SubmissionStatus.RETURNED });
      return write(manager);
    });
  }

  private async withAttachments(
    submission: SubmissionRow,
    db: Db = this.transactions.autocommit,
  ): Promise<SubmissionResponse> {
    const attachments = await this.submissions.attachments(db, submission.id);
    return toSubmissionResponse(submission, attachments);
  }
}

/** Each criterion at most once in one assessment. */
function assertOneEntryPerCriterion(rubric: RubricAssessmentInput[]): void {
  const criteria = new Set(rubric.map((entry) => entry.criterionId.toLowerCase()));
  if (criteria.size !== rubric.length) throw AppError.validation('rubric: a criterionId is given twice');
}

/** The answer of an upsert, whose statement found no task the caller may write when it answers no row. */
function upsertResponse(row: UpsertRow | null): SubmissionResponse {
  if (!row) throw AppError.notFound('Task');
  assertSubmissionWritable(row);
  return toSubmissionResponse(
    gradeVisibleToSubmitter(row as SubmissionRow, row.role),
    (row.attachments ?? []).map(storedAttachmentFromJson),
  );
}
