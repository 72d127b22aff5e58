import { Env, int } from './env';

/**
 * CSV exports of submissions.
 * - `EXPORT_CONCURRENCY` (`2`), `EXPORT_STALL_TIMEOUT_MS` (`60000`).
 */
export interface ExportsConfig {
  /**
   * How many stream at once per instance (each holds a connection of a pool of their own, more wait for one),
   * and how long an export may deliver nothing before it is cut.
   */
  exports: { concurrency: number; stallTimeoutMs: number };
}

export function exportsConfig(env: Env): ExportsConfig {
  return {
    exports: {
      concurrency: int(env, 'EXPORT_CONCURRENCY', 2, 1, 100),
      stallTimeoutMs: int(env, 'EXPORT_STALL_TIMEOUT_MS', 60_000, 100, 3_600_000),
    },
  };
}
