import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { one } from '../database/sql';

export interface StoredFileRow {
  task_id: string;
  /** Set for a submission file: its submitter. */
  submitter_id: string | null;
  original_name: string;
  mime_type: string | null;
  size_bytes: string | null;
}

/** The attachment rows behind a stored file, task or submission. */
@Injectable()
export class FilesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The task or submission attachment stored under `fileKey`, with what its access rule needs. */
  findByKey(fileKey: string): Promise<StoredFileRow | null> {
    return one<StoredFileRow>(
      this.dataSource,
      `SELECT ta.task_id, NULL::uuid AS submitter_id, ta.original_name, ta.mime_type, ta.size_bytes
         FROM task_attachments ta WHERE ta.file_key = $1
       UNION ALL
       SELECT s.task_id, s.user_id, sa.original_name, sa.mime_type, sa.size_bytes
         FROM submission_attachments sa JOIN submissions s ON s.id = sa.submission_id
        WHERE sa.file_key = $1`,
      [fileKey],
    );
  }
}
