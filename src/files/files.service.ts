import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { AccessService } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { FileStorage } from './file-storage';

export interface FileDownload {
  stream: Readable;
  originalName: string;
  mimeType: string;
  sizeBytes: number | null;
}

interface StoredFileRow {
  task_id: string;
  /** Set for a submission file: its submitter. */
  submitter_id: string | null;
  original_name: string;
  mime_type: string | null;
  size_bytes: string | null;
}

/** Downloads of task and submission attachments, each with the access rule of what it is attached to. */
@Injectable()
export class FilesService {
  private readonly logger = new Logger(FilesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
  ) {}

  /**
   * A task file: anyone who can see the task. A submission file: its submitter, and the OWNER and ADMINs of
   * the class (other members 403). Unknown key 404.
   */
  async open(fileKey: string, userId: string): Promise<FileDownload> {
    const [file] = await this.dataSource.query<StoredFileRow[]>(
      `SELECT ta.task_id, NULL::uuid AS submitter_id, ta.original_name, ta.mime_type, ta.size_bytes
         FROM task_attachments ta WHERE ta.file_key = $1
       UNION ALL
       SELECT s.task_id, s.user_id, sa.original_name, sa.mime_type, sa.size_bytes
         FROM submission_attachments sa JOIN submissions s ON s.id = sa.submission_id
        WHERE sa.file_key = $1`,
      [fileKey],
    );
    if (!file) throw AppError.notFound('File');
    if (file.submitter_id !== userId) {
      await this.access.requireTaskAccess(file.task_id, userId, { manage: file.submitter_id !== null });
    }
    let stream: Readable;
    try {
      stream = await this.storage.read(fileKey);
    } catch (error) {
      this.logger.error({ err: error, fileKey }, 'Attachment row without a readable file');
      throw AppError.notFound('File');
    }
    return {
      stream,
      originalName: file.original_name,
      mimeType: file.mime_type ?? 'application/octet-stream',
      sizeBytes: file.size_bytes === null ? null : Number(file.size_bytes),
    };
  }
}
