import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './free-port';
import { TestApp, useTestApp } from './test-app';

const ROOT = join(__dirname, '..', '..');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<Exit>;
}

/**
 * The service as a process of its own (ts-node, as the CLI tests run the CLI) on the database, DATA_DIR and
 * JWT secret of `ctx`, once `/health` answers 200; a test kills it where it stages a crash.
 */
async function startServiceProcess(
  ctx: TestApp,
  started: ChildProcess[],
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      JWT_SECRET: ctx.config.jwt.secret,
      DATABASE_URL: ctx.databaseUrl,
      DATA_DIR: ctx.dataDir,
      PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + 240_000;
  while (child.exitCode === null && Date.now() < deadline) {
    const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
    if (res?.status === 200) return { child, port, output: () => output, exited };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`The service did not become healthy:\n${output}`);
}

/**
 * For the enclosing describe: a test app (`ctx`, on whose database the processes run) and `start()` for
 * service processes (`env`: variables of their own; `testAppEnv`: the test app's), which are killed after the tests if still running. Two starts of the whole service
 * through ts-node take a while on a busy machine: the tests get 5 minutes.
 */
export function useServiceProcesses(testAppEnv: Record<string, string> = {}): {
  ctx: TestApp;
  start: (env?: Record<string, string>) => Promise<ServiceProcess>;
} {
  jest.setTimeout(300_000);
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const child of started)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const ctx = useTestApp(testAppEnv);
  return { ctx, start: (env = {}) => startServiceProcess(ctx, started, env) };
}
