import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FROM_SOURCES, sourcesEnv } from '../utils/from-sources';

const ROOT = join(__dirname, '..', '..');

/** Runs `args` with Node from the sources in an empty working directory, with exactly `env`. */
function node(args: string[], cwd: string, env: Record<string, string>) {
  return spawnSync(process.execPath, [...FROM_SOURCES, ...args], {
    cwd,
    env: sourcesEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** Loading the configuration touches nothing; the entry points' start step prepares DATA_DIR. */
describe('platform: configuration at start', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'cts-config-start-'));
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  it('lets the TypeORM CLI load its data source without creating DATA_DIR or a secret', () => {
    const dataDir = join(cwd, 'data');
    // As `typeorm -d` does: a script that requires the data source module (a script, so TypeORM finds its root).
    const script = join(cwd, 'load-data-source.js');
    writeFileSync(script, `require(${JSON.stringify(join(ROOT, 'src', 'database', 'data-source.ts'))});\n`);
    const run = node([script], cwd, {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      DATA_DIR: dataDir,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('lets the TypeORM CLI read DATABASE_URL from .env, the environment winning', () => {
    const script = join(cwd, 'print-data-source-url.js');
    const dataSource = JSON.stringify(join(ROOT, 'src', 'database', 'data-source.ts'));
    writeFileSync(script, `process.stdout.write(require(${dataSource}).default.options.url);\n`);
    writeFileSync(join(cwd, '.env'), 'DATABASE_URL=postgres://from-env-file@127.0.0.1:1/none\n');
    const fromFile = node([script], cwd, { DATA_DIR: join(cwd, 'data') });
    expect({ status: fromFile.status, stderr: fromFile.stderr }).toEqual({ status: 0, stderr: '' });
    expect(fromFile.stdout).toBe('postgres://from-env-file@127.0.0.1:1/none');
    const fromEnvironment = node([script], cwd, {
      DATA_DIR: join(cwd, 'data'),
      DATABASE_URL: 'postgres://from-environment@127.0.0.1:1/none',
    });
    expect(fromEnvironment.stdout).toBe('postgres://from-environment@127.0.0.1:1/none');
  });

  it('stops the server with one line naming DATA_DIR when it cannot hold files', () => {
    const file = join(cwd, 'a-file');
    writeFileSync(file, '');
    const run = node([join(ROOT, 'src', 'main.ts')], cwd, { DATA_DIR: file, LOG_LEVEL: 'silent' });
    expect(run.status).toBe(1);
    expect(run.stdout + run.stderr).toMatch(
      /^Invalid configuration: DATA_DIR must be a writable directory, got "\S+a-file" \(.+\)\n$/,
    );
  });
});
