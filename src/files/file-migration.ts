import { join } from 'node:path';
import { AppConfig } from '../config/config';
import { LocalFileStorage } from './local-file-storage';
import { S3FileStorage } from './s3-file-storage';

/** Local files looked at per listing; progress is reported after each. */
const MIGRATION_PAGE_SIZE = 200;

export interface FileMigrationResult {
  /** Files copied into the bucket, and files already there with the same size. */
  copied: number;
  skipped: number;
  copiedBytes: number;
}

/**
 * `files:migrate`: copies the files under `DATA_DIR/files` into the bucket of FILE_STORAGE=s3, each under its
 * own key, so the attachment rows stay as they are. An object already there with the same size is skipped:
 * a run stopped half-way (or repeated) goes on where it stopped. Local files are left in place.
 */
export async function migrateLocalFiles(
  config: AppConfig,
  progress: (line: string) => void,
): Promise<FileMigrationResult> {
  const { fileStorage } = config;
  if (fileStorage.driver !== 's3') {
    throw new Error('files:migrate copies into the bucket: set FILE_STORAGE=s3 and the S3_* settings');
  }
  const source = new LocalFileStorage(join(config.dataDir, 'files'));
  const target = new S3FileStorage(fileStorage.s3);
  const result: FileMigrationResult = { copied: 0, skipped: 0, copiedBytes: 0 };
  try {
    let after: string | undefined;
    for (;;) {
      const page = await source.list(after, MIGRATION_PAGE_SIZE);
      for (const file of page) {
        if ((await target.sizeOf(file.key)) === file.sizeBytes) {
          result.skipped += 1;
          continue;
        }
        await target.write(file.key, await source.read(file.key));
        result.copied += 1;
        result.copiedBytes += file.sizeBytes;
      }
      if (page.length > 0) {
        after = page[page.length - 1].key;
        progress(
          `files:migrate: ${result.copied} copied, ${result.skipped} already there, last key ${after}`,
        );
      }
      if (page.length < MIGRATION_PAGE_SIZE) return result;
    }
  } finally {
    target.onApplicationShutdown();
  }
}
