import { Env, int } from './env';

/**
 * Submission history.
 * - `SUBMISSION_VERSION_WINDOW_SECONDS` (`300`; `0`: every write makes a version).
 */
export interface SubmissionsConfig {
  /**
   * A submitter's write within this many seconds of the start of the submission's current version amends that
   * version instead of making a new one.
   */
  submissions: { versionWindowSeconds: number };
}

export function submissionsConfig(env: Env): SubmissionsConfig {
  return {
    submissions: {
      versionWindowSeconds: int(env, 'SUBMISSION_VERSION_WINDOW_SECONDS', 300, 0, 31_536_000),
    },
  };
}
