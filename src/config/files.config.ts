import { Env, int } from './env';

/**
 * Attachments, stored under `DATA_DIR/files`.
 * - `UPLOAD_MAX_BYTES` (`20971520`, 20 MiB): larger uploads answer 413.
 * - `FILE_URL_TTL_SECONDS` (`300`): lifetime of a signed file URL (`GET /files/:fileKey/url`).
 */
export interface FilesConfig {
  uploads: { maxBytes: number };
  signedFileUrls: { ttlSeconds: number };
}

export function filesConfig(env: Env): FilesConfig {
  return {
    uploads: { maxBytes: int(env, 'UPLOAD_MAX_BYTES', 20 * 1024 * 1024, 1) },
    // A day at most: the URL is a bearer credential for the file and cannot be revoked.
    signedFileUrls: { ttlSeconds: int(env, 'FILE_URL_TTL_SECONDS', 300, 1, 86_400) },
  };
}
