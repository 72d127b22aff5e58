import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, dropTestDatabase, withDatabase } from '../utils/database';
import { freePort } from '../utils/free-port';
import { FROM_SOURCES, sourcesEnv } from '../utils/from-sources';

const ROOT = join(__dirname, '..', '..');

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Node with `args` (an entry point and its arguments), started in `cwd` with exactly `env` (plus what Node and
 * ts-node need), so that nothing of the test's own environment decides what the `.env` there may set.
 */
function runNode(args: string[], cwd: string, env: Record<string, string>): Run {
  const child = spawn(process.execPath, args, {
    cwd,
    env: sourcesEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The server from the sources. */
const runServer = (cwd: string, env: Record<string, string>): Run =>
  runNode([...FROM_SOURCES, join(ROOT, 'src', 'main.ts')], cwd, env);

async function waitForHealth(port: number, run: Run): Promise<void> {
  let exited = false;
  void run.exited.then(() => (exited = true));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !exited) {
    const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
    if (res?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`No answer on port ${port}:\n${run.output()}`);
}

/** `.env` in the working directory, read at start by the server and the CLI; the environment wins. */
describe('platform: .env in the working directory', () => {
  jest.setTimeout(90_000);

  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  let database: string;
  let databaseUrl: string;
  let cwd: string;
  const running: ChildProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
    databaseUrl = withDatabase(adminUrl, database);
  });
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'cts-env-'));
  });
  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(cwd, { recursive: true, force: true });
  });
  afterAll(() => dropTestDatabase(adminUrl, database));

  it('starts the server with the values of .env, and those of the environment where both are set', async () => {
    const port = await freePort();
    const dataDir = join(cwd, 'from-env-file');
    writeFileSync(
      join(cwd, '.env'),
      `# comment\nPORT=${port}\nDATA_DIR=${dataDir}\nLOG_LEVEL=silent\nDATABASE_URL=postgres://nobody@127.0.0.1:1/none\n`,
    );
    const run = runServer(cwd, {
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
    });
    running.push(run.child);
    await waitForHealth(port, run);
    // DATA_DIR from .env: the development secret was generated there.
    expect(existsSync(join(dataDir, 'jwt-secret'))).toBe(true);
    // LOG_LEVEL and DATABASE_URL from the environment: info lines are written, and the database answered.
    expect(run.output()).toContain(`Listening on :${port}`);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('lets the CLI read .env too', async () => {
    writeFileSync(join(cwd, '.env'), `DATABASE_URL=${databaseUrl}\nDATA_DIR=${join(cwd, 'data')}\n`);
    // The built CLI (the global setup builds dist/), as `npm run cli` runs it: its lazy import() of its Nest
    // module is Node's own, which does not load TypeScript sources.
    const run = runNode([join(ROOT, 'dist', 'cli', 'main.js'), 'schools:list'], cwd, {
      NODE_ENV: 'development',
    });
    running.push(run.child);
    expect(await run.exited).toBe(0);
    expect(JSON.parse(run.output())).toEqual(expect.any(Array));
  });

  it('stops the start with one clear line when .env cannot be read', async () => {
    mkdirSync(join(cwd, '.env'));
    const run = runServer(cwd, { NODE_ENV: 'development', DATA_DIR: join(cwd, 'data') });
    running.push(run.child);
    expect(await run.exited).toBe(1);
    expect(run.output().trim()).toMatch(
      /^Invalid configuration: \.env could not be read from \S+\.env \(.+\)$/,
    );
  });
});
