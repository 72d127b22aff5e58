import { ApiProperty } from '@nestjs/swagger';
import { iso } from '../common/utils/time';
import { StoredAttachment } from './stored-attachment.entity';

/** TaskAttachment / SubmissionAttachment: one shape. */
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
