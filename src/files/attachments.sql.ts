import { StoredAttachment } from './stored-attachment.entity';

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
