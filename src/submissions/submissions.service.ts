import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AccessService } from '../access/access.service';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { createValidationPipe } from '../common/errors/validation';
import {
  AttachmentResponse,
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
import { toListEntryResponse, toSubmissionResponse } from './submissions.mapper';
import { SubmissionsRepository, WriteRules } from './submissions.repository';

/** The global validation pipe, for a body that is judged after the access check. */
const BODY_PIPE = createValidationPipe();

/** A bound on the attachment list of one submission (as for a task). */
export const ATTACHMENTS_PER_SUBMISSION_MAX = 50;

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

@Injectable()
export class SubmissionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
    private readonly submissions: SubmissionsRepository,
  ) {}

  async getMine(taskId: string, userId: string): Promise<SubmissionResponse> {
    await this.access.requireTaskAccess(taskId, userId);
    const submission = await this.submissions.findMine(this.dataSource, taskId, userId);
    if (!submission) throw AppError.notFound('Submission');
    return this.withAttachments(submission);
  }

  /**
   * One row per (task, user) whatever the concurrency: the unique constraint decides insert or update. One
   * statement when the caller may see the task; otherwise AccessService tells why not (404, 403), and a
   * task that became visible meanwhile is written by a second try.
   */
  async upsertMine(taskId: string, userId: string, body: unknown): Promise<SubmissionResponse> {
    const { content } = await this.upsertBody(taskId, userId, body);
    let row = await this.submissions.upsertMine(taskId, userId, content);
    if (!row) {
      await this.access.requireTaskAccess(taskId, userId);
      row = await this.submissions.upsertMine(taskId, userId, content);
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
        const submissionId = await this.submissions.touchMine(manager, taskId, userId);
        if (
          (await this.submissions.countAttachments(manager, submissionId)) >= ATTACHMENTS_PER_SUBMISSION_MAX
        ) {
          throw AppError.validation(`A submission has at most ${ATTACHMENTS_PER_SUBMISSION_MAX} attachments`);
        }
        const stored = { fileKey: file.key, originalName, mimeType, sizeBytes: file.size };
        return toAttachmentResponse(await this.submissions.addAttachment(manager, submissionId, stored));
      });
    } catch (error) {
      if (file) await this.storage.discard([file.key], { taskId });
      throw error;
    }
  }

  async removeAttachment(taskId: string, userId: string, attachmentId: string): Promise<void> {
    const fileKey = await this.writeMine(taskId, userId, async (manager) => {
      const removed = await this.submissions.removeMyAttachment(manager, taskId, userId, attachmentId);
      if (removed === null) throw AppError.notFound('Attachment');
      return removed;
    });
    await this.storage.discard([fileKey], { taskId });
  }

  /** One entry per class member, in a fixed number of queries whatever the class size. */
  async list(taskId: string, userId: string): Promise<SubmissionListEntryResponse[]> {
    await this.access.requireTaskAccess(taskId, userId, { manage: true });
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

  async getOne(taskId: string, submissionId: string, userId: string): Promise<SubmissionResponse> {
    await this.access.requireTaskAccess(taskId, userId, { manage: true });
    const submission = await this.submissions.findInTask(this.dataSource, taskId, submissionId);
    if (!submission) throw AppError.notFound('Submission');
    return this.withAttachments(submission);
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
    const graded = await this.submissions.grade(taskId, submissionId, { ...dto, reviewerId: graderId });
    if (!graded) throw AppError.notFound('Submission');
    return this.withAttachments(graded);
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
    const rules = await this.submissions.writeRules(manager, taskId, userId, lockApplies);
    if (!rules) throw AppError.notFound('Task');
    assertWriteRules(rules);
  }

  private async withAttachments(submission: Submission): Promise<SubmissionResponse> {
    const attachments = await this.submissions.attachments(this.dataSource, submission.id);
    return toSubmissionResponse(submission, attachments);
  }
}
