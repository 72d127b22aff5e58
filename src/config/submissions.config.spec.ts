import { itRejects } from '../../test/utils/config';
import { submissionsConfig } from './submissions.config';

describe('submissionsConfig', () => {
  it('defaults the version window to 300 s and takes 0 (every write a version)', () => {
    expect(submissionsConfig({}).submissions.versionWindowSeconds).toBe(300);
    expect(
      submissionsConfig({ SUBMISSION_VERSION_WINDOW_SECONDS: '0' }).submissions.versionWindowSeconds,
    ).toBe(0);
  });

  itRejects(submissionsConfig, [
    ['SUBMISSION_VERSION_WINDOW_SECONDS', { SUBMISSION_VERSION_WINDOW_SECONDS: '-1' }],
    ['SUBMISSION_VERSION_WINDOW_SECONDS', { SUBMISSION_VERSION_WINDOW_SECONDS: '31536001' }],
  ]);
});
