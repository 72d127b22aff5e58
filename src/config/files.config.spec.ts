import { itRejects } from '../../test/utils/config';
import { filesConfig } from './files.config';

describe('filesConfig', () => {
  it('takes a whole number of bytes', () => {
    expect(filesConfig({ UPLOAD_MAX_BYTES: ' 1024 ' }).uploads.maxBytes).toBe(1024);
  });

  itRejects(filesConfig, [['UPLOAD_MAX_BYTES', { UPLOAD_MAX_BYTES: '20MB' }]]);
});
