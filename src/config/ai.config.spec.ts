import { itRejects } from '../../test/utils/config';
import { aiConfig } from './ai.config';

describe('aiConfig', () => {
  it('keeps the API base without trailing slashes, as paths are appended to it', () => {
    expect(aiConfig({ AI_BASE_URL: 'http://127.0.0.1:9/v1//' }).ai.baseUrl).toBe('http://127.0.0.1:9/v1');
  });

  itRejects(aiConfig, [
    ['AI_PROVIDER', { AI_PROVIDER: 'magic' }],
    ['AI_BASE_URL', { AI_BASE_URL: 'nowhere' }],
    ['AI_TIMEOUT_MS', { AI_TIMEOUT_MS: '-1' }],
    ['AI_LOCAL_THREADS', { AI_LOCAL_THREADS: '0' }],
  ]);
});
