import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccessService, TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { toAttachmentResponse } from '../files/attachment.response';
import { FileStorage } from '../files/file-storage';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { uploadMetadata } from '../files/upload-metadata';
import { TaskAttachmentResponse } from './dto/task.response';
import { TaskAttachment } from './entities/task-attachment.entity';
import { lockLiveTask } from './task-writes';

/** A bound on the attachment list of one task. */
export const ATTACHMENTS_PER_TASK_MAX = 50;

@Injectable()
export class TaskAttachmentsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
  ) {}

  /** The file is already stored when this runs; it is removed again unless its row is written. */
  async add(
    taskId: string,
    userId: string,
    file: UploadedFileInfo | undefined,
  ): Promise<TaskAttachmentResponse> {
    try {
      await this.access.requireTaskAccess(taskId, userId, { manage: true });
      if (!file) throw AppError.validation('file is required (multipart field "file")');
      const { originalName, mimeType } = uploadMetadata(file);
      const attachment = await this.dataSource.transaction(async (manager) => {
        // Locked: the count below holds until the insert, and a concurrent delete of the task waits.
        await lockLiveTask(manager, taskId);
        if ((await manager.count(TaskAttachment, { where: { taskId } })) >= ATTACHMENTS_PER_TASK_MAX) {
          throw AppError.validation(`A task has at most ${ATTACHMENTS_PER_TASK_MAX} attachments`);
        }
        return manager.save(
          manager.create(TaskAttachment, {
            taskId,
            fileKey: file.key,
            originalName,
            mimeType,
            sizeBytes: String(file.size),
          }),
        );
      });
      return toAttachmentResponse(attachment);
    } catch (error) {
      if (file) await this.storage.discard([file.key], { taskId });
      throw error;
    }
  }

  /** `access` comes from the route's `@RequireTaskAccess({ manage: true })`. */
  async remove({ taskId }: TaskAccess, attachmentId: string): Promise<void> {
    const [rows] = await this.dataSource.query<[{ file_key: string }[], number]>(
      `DELETE FROM task_attachments WHERE id = $1 AND task_id = $2 RETURNING file_key`,
      [attachmentId, taskId],
    );
    if (rows.length === 0) throw AppError.notFound('Attachment');
    await this.storage.discard([rows[0].file_key], { taskId });
  }
}
