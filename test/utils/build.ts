import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * Builds dist/ when it is missing or stale, as `npm start` does. Run once before all test files: the tests
 * that start the built service run in parallel workers, and two builds into one dist/ at once break it.
 */
export function ensureBuilt(): void {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.js')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`Build failed:\n${build.stdout}${build.stderr}`);
}
