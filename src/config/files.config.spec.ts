import { itRejects } from '../../test/utils/config';
import { filesConfig } from './files.config';

describe('filesConfig', () => {
  it('takes a whole number of bytes', () => {
    expect(filesConfig({ UPLOAD_MAX_BYTES: ' 1024 ' }).uploads.maxBytes).toBe(1024);
  });

  it('stores locally with a 1 GiB quota by default; 0 turns the quota off', () => {
    expect(filesConfig({})).toEqual({
      uploads: { maxBytes: 20 * 1024 * 1024, quotaBytesPerUser: 1024 ** 3 },
      fileStorage: { driver: 'local' },
      signedFileUrls: { ttlSeconds: 300 },
    });
    expect(filesConfig({ STORAGE_QUOTA_BYTES_PER_USER: '0' }).uploads.quotaBytesPerUser).toBe(0);
  });

  it('reads the S3 settings', () => {
    expect(
      filesConfig({
        FILE_STORAGE: 's3',
        S3_BUCKET: 'files',
        S3_ENDPOINT: 'http://127.0.0.1:9000/',
        S3_ACCESS_KEY_ID: 'id',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_FORCE_PATH_STYLE: 'true',
        S3_UPLOAD_MEMORY_MIB: '64',
        S3_KEY_PREFIX: 'classroom/files/',
      }).fileStorage,
    ).toEqual({
      driver: 's3',
      s3: {
        bucket: 'files',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:9000',
        credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
        forcePathStyle: true,
        uploadMemoryBytes: 64 * 1024 * 1024,
        keyPrefix: 'classroom/files/',
      },
    });
    expect(filesConfig({ FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_REGION: 'auto' }).fileStorage).toEqual({
      driver: 's3',
      s3: {
        bucket: 'files',
        region: 'auto',
        endpoint: null,
        credentials: null,
        forcePathStyle: false,
        uploadMemoryBytes: 320 * 1024 * 1024,
        keyPrefix: '',
      },
    });
  });

  it('takes uploads of up to 10,000 parts of 5 MiB with the S3 driver, and any size with the local one', () => {
    const largest = { UPLOAD_MAX_BYTES: String(10_000 * 5 * 1024 * 1024) };
    expect(filesConfig({ FILE_STORAGE: 's3', S3_BUCKET: 'files', ...largest }).uploads.maxBytes).toBe(
      52_428_800_000,
    );
    expect(filesConfig({ UPLOAD_MAX_BYTES: '52428800001' }).uploads.maxBytes).toBe(52_428_800_001);
  });

  it('gives signed file URLs 300 s by default', () => {
    expect(filesConfig({}).signedFileUrls.ttlSeconds).toBe(300);
    expect(filesConfig({ FILE_URL_TTL_SECONDS: '1' }).signedFileUrls.ttlSeconds).toBe(1);
  });

  itRejects(filesConfig, [
    ['UPLOAD_MAX_BYTES', { UPLOAD_MAX_BYTES: '20MB' }],
    ['STORAGE_QUOTA_BYTES_PER_USER', { STORAGE_QUOTA_BYTES_PER_USER: '-1' }],
    ['FILE_STORAGE', { FILE_STORAGE: 'nfs' }],
    ['S3_BUCKET', { FILE_STORAGE: 's3' }],
    ['S3_ENDPOINT', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_ENDPOINT: 'ftp://host' }],
    ['S3_ACCESS_KEY_ID', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_ACCESS_KEY_ID: 'id' }],
    ['S3_FORCE_PATH_STYLE', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_FORCE_PATH_STYLE: 'maybe' }],
    ['S3_UPLOAD_MEMORY_MIB', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_UPLOAD_MEMORY_MIB: '4' }],
    ['S3_UPLOAD_MEMORY_MIB', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_UPLOAD_MEMORY_MIB: '1.5GB' }],
    // More than S3's 10,000 parts of 5 MiB: such an upload could never complete.
    ['UPLOAD_MAX_BYTES', { FILE_STORAGE: 's3', S3_BUCKET: 'files', UPLOAD_MAX_BYTES: '52428800001' }],
    ['S3_KEY_PREFIX', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_KEY_PREFIX: '/files/' }],
    ['S3_KEY_PREFIX', { FILE_STORAGE: 's3', S3_BUCKET: 'files', S3_KEY_PREFIX: 'files?/' }],
    ['FILE_URL_TTL_SECONDS', { FILE_URL_TTL_SECONDS: '0' }],
    ['FILE_URL_TTL_SECONDS', { FILE_URL_TTL_SECONDS: '86401' }],
  ]);
});
