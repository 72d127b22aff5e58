import { Env, int } from './env';

/**
 * Attachments, stored under `DATA_DIR/files`.
 * - `UPLOAD_MAX_BYTES` (`20971520`, 20 MiB): larger uploads answer 413.
 */
export interface FilesConfig {
  uploads: { maxBytes: number };
}

export function filesConfig(env: Env): FilesConfig {
  return { uploads: { maxBytes: int(env, 'UPLOAD_MAX_BYTES', 20 * 1024 * 1024, 1) } };
}
