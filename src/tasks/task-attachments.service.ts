import { Injectable } from '@nestjs/common';
import { TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { toAttachmentResponse } from '../files/attachment.response';
import { FileStorage } from '../files/file-storage';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { uploadMetadata } from '../files/upload-metadata';
import { TaskAttachmentResponse } from './dto/task.response';
import { TasksRepository } from './tasks.repository';
import { Transactions } from '../database/transactions';

/** A bound on the attachment list of one task. */
export const ATTACHMENTS_PER_TASK_MAX = 50;

@Injectable()
export class TaskAttachmentsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly storage: FileStorage,
    private readonly tasks: TasksRepository,
  ) {}

  /**
   * The file is already stored when this runs; it is removed again unless its row is written. `access` comes
   * from the route's `@TaskManagerRoute()`, as for `remove`.
   */
  async add(
    { taskId }: TaskAccess,
    userId: string,
    file: UploadedFileInfo | undefined,
  ): Promise<TaskAttachmentResponse> {
    try {
      if (!file) throw AppError.validation('file is required (multipart field "file")');
      const { originalName, mimeType } = uploadMetadata(file);
      const attachment = await this.transactions.run(async (manager) => {
        // Locked: the count below holds until the insert, and a concurrent delete of the task waits.
        await this.tasks.lockLive(manager, taskId);
        if ((await this.tasks.countAttachments(manager, taskId)) >= ATTACHMENTS_PER_TASK_MAX) {
          throw AppError.validation(`A task has at most ${ATTACHMENTS_PER_TASK_MAX} attachments`);
        }
        const stored = { fileKey: file.key, originalName, mimeType, sizeBytes: file.size };
        return this.tasks.addAttachment(manager, taskId, userId, stored);
      });
      return toAttachmentResponse(attachment);
    } catch (error) {
      if (file) await this.storage.discard([file.key], { taskId });
      throw error;
    }
  }

  async remove({ taskId }: TaskAccess, attachmentId: string): Promise<void> {
    const fileKey = await this.tasks.deleteAttachment(this.transactions.autocommit, taskId, attachmentId);
    if (fileKey === null) throw AppError.notFound('Attachment');
    await this.storage.discard([fileKey], { taskId });
  }
}
