import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../common/utils/time';

/** A stored attachment row (task or submission attachment). */
export interface AttachmentRow {
  id: string;
  fileKey: string;
  originalName: string;
  mimeType: string | null;
  /** bigint arrives from pg as a string. */
  sizeBytes: string | null;
  createdAt: Date;
}

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

export function toAttachmentResponse(row: AttachmentRow): AttachmentResponse {
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
