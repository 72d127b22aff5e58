import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { TestApp } from './test-app';

const ROOT = join(__dirname, '..', '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The operator CLI (`npm run cli -- <args>`) as a child process against the test app's database and
 * DATA_DIR, with `env` on top: the built CLI (`dist/cli/main.js`, which the global setup builds), the file
 * `npm run cli` runs, whose lazy import() of its Nest module is Node's own.
 */
export function runCli(ctx: TestApp, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'dist', 'cli', 'main.js'), ...args],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_ENV: 'test',
          DATABASE_URL: ctx.databaseUrl,
          DATA_DIR: ctx.dataDir,
          ...env,
        },
        timeout: 180_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
