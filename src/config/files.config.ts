import { bool, ConfigError, Env, int, optional, str, url } from './env';

/**
 * Attachments: where they are stored, how large they may be, how much one user may store.
 * - `UPLOAD_MAX_BYTES` (`20971520`, 20 MiB): larger uploads answer 413.
 * - `FILE_STORAGE` (`local`): `local` (under `DATA_DIR/files`) or `s3` (an S3-compatible bucket: AWS S3,
 *   MinIO, Ceph/RGW, Cloudflare R2).
 * - `S3_BUCKET` (required with `s3`), `S3_REGION` (`us-east-1`; R2 takes `auto`), `S3_ENDPOINT` (unset: AWS),
 *   `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY` (unset: the SDK's default credential chain, both or
 *   neither), `S3_FORCE_PATH_STYLE` (`false`; MinIO and Ceph usually need `true`), `S3_UPLOAD_MEMORY_MIB`
 *   (`320`): memory an instance may hold in 5 MiB parts of uploads in flight, `S3_KEY_PREFIX` (empty): put
 *   before every key, so that in a bucket shared with other writers the service lists, sweeps and aborts
 *   only its own objects and uploads (e.g. `classroom/`).
 * - `STORAGE_QUOTA_BYTES_PER_USER` (`1073741824`, 1 GiB; `0` = none): a user's task and submission files.
 * - `FILE_URL_TTL_SECONDS` (`300`): lifetime of a signed file URL (`GET /files/:fileKey/url`).
 */
/**
 * Every part of a multipart upload to S3 but the last has this size, the least S3 takes; a smaller file is
 * one PutObject. S3 takes at most S3_MAX_PARTS parts, so with the S3 driver UPLOAD_MAX_BYTES is at most
 * S3_MAX_PARTS × S3_PART_SIZE (48.8 GiB).
 */
export const S3_PART_SIZE = 5 * 1024 * 1024;
export const S3_MAX_PARTS = 10_000;

export interface FilesConfig {
  uploads: { maxBytes: number; quotaBytesPerUser: number };
  fileStorage: { driver: 'local' } | { driver: 's3'; s3: S3StorageConfig };
  signedFileUrls: { ttlSeconds: number };
}

export interface S3StorageConfig {
  bucket: string;
  region: string;
  endpoint: string | null;
  /** Null: the SDK's default credential chain (environment, profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  forcePathStyle: boolean;
  /** Bytes of upload parts held at once (at least one 5 MiB part). */
  uploadMemoryBytes: number;
  /** Put before every object key: the service's objects, listings and sweeps stay under it. */
  keyPrefix: string;
}

/** What S3_KEY_PREFIX may hold: S3's safe key characters, not starting with `/`, at most 512 of them. */
const KEY_PREFIX_PATTERN = /^(?:[A-Za-z0-9!_.*'()-][A-Za-z0-9!_.*'()/-]{0,511})?$/;

function s3StorageConfig(env: Env): S3StorageConfig {
  const bucket = optional(env, 'S3_BUCKET');
  if (bucket === null) throw new ConfigError('S3_BUCKET', 'is required when FILE_STORAGE=s3');
  const accessKeyId = optional(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new ConfigError('S3_ACCESS_KEY_ID', 'and S3_SECRET_ACCESS_KEY must be set together');
  }
  return {
    bucket,
    region: str(env, 'S3_REGION', 'us-east-1'),
    endpoint: url(env, 'S3_ENDPOINT', null, ['http:', 'https:']),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
    uploadMemoryBytes: int(env, 'S3_UPLOAD_MEMORY_MIB', 320, 5) * 1024 * 1024,
    keyPrefix: s3KeyPrefix(env),
  };
}

function s3KeyPrefix(env: Env): string {
  const prefix = str(env, 'S3_KEY_PREFIX', '');
  if (!KEY_PREFIX_PATTERN.test(prefix)) {
    throw new ConfigError(
      'S3_KEY_PREFIX',
      "must be up to 512 of A-Z a-z 0-9 ! _ . * ' ( ) - /, not starting with /",
    );
  }
  return prefix;
}

export function filesConfig(env: Env): FilesConfig {
  const driver = str(env, 'FILE_STORAGE', 'local');
  if (driver !== 'local' && driver !== 's3') {
    throw new ConfigError('FILE_STORAGE', `must be "local" or "s3", got "${driver}"`);
  }
  const maxBytes = int(env, 'UPLOAD_MAX_BYTES', 20 * 1024 * 1024, 1);
  if (driver === 's3' && maxBytes > S3_MAX_PARTS * S3_PART_SIZE) {
    throw new ConfigError(
      'UPLOAD_MAX_BYTES',
      `must be at most ${S3_MAX_PARTS * S3_PART_SIZE} with FILE_STORAGE=s3 (${S3_MAX_PARTS} parts of 5 MiB)`,
    );
  }
  return {
    uploads: {
      maxBytes,
      quotaBytesPerUser: int(env, 'STORAGE_QUOTA_BYTES_PER_USER', 1024 ** 3, 0),
    },
    fileStorage: driver === 's3' ? { driver, s3: s3StorageConfig(env) } : { driver },
    // A day at most: the URL is a bearer credential for the file and cannot be revoked.
    signedFileUrls: { ttlSeconds: int(env, 'FILE_URL_TTL_SECONDS', 300, 1, 86_400) },
  };
}
