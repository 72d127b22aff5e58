import { itRejects } from '../../test/utils/config';
import { filesConfig } from './files.config';

describe('filesConfig', () => {
  it('takes a whole number of bytes', () => {
    expect(filesConfig({ UPLOAD_MAX_BYTES: ' 1024 ' }).uploads.maxBytes).toBe(1024);
  });

  it('gives signed file URLs 300 s by default', () => {
    expect(filesConfig({}).signedFileUrls.ttlSeconds).toBe(300);
    expect(filesConfig({ FILE_URL_TTL_SECONDS: '1' }).signedFileUrls.ttlSeconds).toBe(1);
  });

  itRejects(filesConfig, [
    ['UPLOAD_MAX_BYTES', { UPLOAD_MAX_BYTES: '20MB' }],
    ['FILE_URL_TTL_SECONDS', { FILE_URL_TTL_SECONDS: '0' }],
    ['FILE_URL_TTL_SECONDS', { FILE_URL_TTL_SECONDS: '86401' }],
  ]);
});
