import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../common/utils/time';
import { StoredAttachment } from './stored-attachment.entity';

/** TaskAttachment / SubmissionAttachment of CONTRACT §2. */
export class AttachmentResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ description: 'Opaque, random, URL-safe storage key' })
  fileKey: string;

  @ApiProperty({ example: '作业说明.pdf' })
  originalName: string;

  @ApiProperty({ type: String, nullable: true, example: 'application/pdf' })
  mimeType: string | null;

  @ApiProperty({ type: Number, nullable: true })
  sizeBytes: number | null;

  @ApiProperty({ example: '/files/Zx3…', description: 'GET /files/:fileKey, relative to the API base' })
  url: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

export function toAttachmentResponse(row: StoredAttachment): AttachmentResponse {
  return {
    id: row.id,
    fileKey: row.fileKey,
    originalName: row.originalName,
    mimeType: row.mimeType,
    sizeBytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
    url: `/files/${row.fileKey}`,
    createdAt: iso(row.createdAt)!,
  };
}

/**
 * SQL: the attachments of one task or submission as a JSON array in upload order, each an `AttachmentJson`,
 * so a detail and its attachments come back in one statement. `table` has alias `a`.
 */
export const attachmentsJsonSql = (table: string, ownerColumn: string, owner: string): string =>
  `(SELECT COALESCE(json_agg(json_build_object('id', a.id, 'fileKey', a.file_key, 'originalName', a.original_name,
              'mimeType', a.mime_type, 'sizeBytes', a.size_bytes::text, 'createdAt', a.created_at)
              ORDER BY a.created_at, a.id), '[]')
      FROM ${table} a WHERE a.${ownerColumn} = ${owner})`;

/** An attachment as `attachmentsJsonSql` aggregates it (JSON has no timestamps). */
export type AttachmentJson = Omit<StoredAttachment, 'createdAt'> & { createdAt: string };

export const storedAttachmentFromJson = (json: AttachmentJson): StoredAttachment => ({
  ...json,
  createdAt: new Date(json.createdAt),
});
