import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../../src/config/config';
import { EMBEDDED_DATABASE, resolveDatabase } from '../../src/database/embedded';
import { freePort } from '../utils/free-port';

/**
 * The built service as an operator runs it: `node dist/main.js` with DATABASE_URL unset, so it starts the
 * embedded PostgreSQL under DATA_DIR. Covers restart with the data kept, graceful SIGTERM, a crash of the
 * service (orphaned database server) and a stale postmaster.pid.
 */
const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'main.js');

interface RunningService {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The service's environment: the caller's, minus anything pointing at the test database server. */
function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...extra };
  for (const name of ['DATABASE_URL', 'JWT_SECRET', 'MIGRATIONS_RUN', 'TEST_ADMIN_DATABASE_URL'])
    delete env[name];
  return env;
}

/** Every service process a test started, so that a failing test leaves nothing running behind. */
const started: ChildProcess[] = [];

function run(
  env: Record<string, string>,
  wrapper: string[] = [],
  script = [MAIN],
): {
  child: ChildProcess;
  output: () => string;
  exited: RunningService['exited'];
} {
  const [command, ...args] = [...wrapper, process.execPath, ...script];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: serviceEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

async function startService(dataDir: string): Promise<RunningService> {
  const port = await freePort();
  const service = run({ DATA_DIR: dataDir, PORT: String(port) });
  let exitedEarly = false;
  void service.exited.then(() => (exitedEarly = true));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && !exitedEarly) {
    const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
    if (res?.status === 200) {
      expect(await res.json()).toEqual({ status: 'ok', storage: 'ok' });
      return { ...service, port };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  service.child.kill('SIGKILL');
  throw new Error(`The service did not become healthy:\n${service.output()}`);
}

/** SQL straight into the embedded database, with the port and password the service keeps in DATA_DIR. */
async function withEmbeddedDb<T>(dataDir: string, work: (client: Client) => Promise<T>): Promise<T> {
  const { port, password } = JSON.parse(readFileSync(join(dataDir, 'postgres', 'connection.json'), 'utf8'));
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    database: EMBEDDED_DATABASE,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function schoolNames(dataDir: string): Promise<string[]> {
  return withEmbeddedDb(dataDir, async (client) =>
    (await client.query('SELECT name FROM schools ORDER BY name')).rows.map(
      (row: { name: string }) => row.name,
    ),
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('embedded PostgreSQL (built service, DATABASE_URL unset)', () => {
  let dataDir: string;
  const pidFile = () => join(dataDir, 'postgres', 'pgdata', 'postmaster.pid');

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cts-embedded-'));
    // Passable, so that a root test run can hand the cluster to an unprivileged account.
    chmodSync(dataDir, 0o755);
  }, 180_000);
  afterAll(async () => {
    for (const child of started)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (!dataDir) return;
    // A service killed mid-test leaves its database server running: stop it before removing its files.
    const orphan = existsSync(pidFile()) ? Number(readFileSync(pidFile(), 'utf8').split('\n')[0]) : 0;
    if (orphan && isAlive(orphan)) {
      process.kill(orphan, 'SIGINT');
      await waitFor(() => !isAlive(orphan), 'the leftover database server to stop');
    }
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('serves the API, finishes an in-flight request on SIGTERM, exits 0 and keeps the data', async () => {
    const service = await startService(dataDir);
    expect(service.output()).toContain('(embedded PostgreSQL)');
    expect((await fetch(`http://127.0.0.1:${service.port}/openapi.json`)).status).toBe(200);
    await withEmbeddedDb(dataDir, (client) =>
      client.query(`INSERT INTO schools (name) VALUES ('Embedded High')`),
    );

    // A request whose body is still arriving when SIGTERM comes in must still be answered.
    const socket = connect(service.port, '127.0.0.1');
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk.toString()));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /no/such/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    service.child.kill('SIGTERM');
    await waitFor(() => service.output().includes('SIGTERM received'), 'the shutdown to begin');
    socket.write('}');
    await waitFor(() => reply.includes('\r\n\r\n{'), 'the in-flight answer');
    expect(reply).toMatch(/^HTTP\/1\.1 404 /);
    socket.destroy();

    expect(await service.exited).toEqual({ code: 0, signal: null });
    // PostgreSQL stopped cleanly: it removes its pid file on the way out.
    expect(existsSync(pidFile())).toBe(false);

    const again = await startService(dataDir);
    expect(await schoolNames(dataDir)).toEqual(['Embedded High']);
    again.child.kill('SIGTERM');
    expect(await again.exited).toEqual({ code: 0, signal: null });
  }, 150_000);

  it('lets tools share the running server, but not a second service', async () => {
    const service = await startService(dataDir);
    const shared = await resolveDatabase(loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(32) }));
    const client = new Client({ connectionString: shared.url });
    await client.connect();
    expect((await client.query('SELECT count(*)::int AS n FROM schools')).rows).toEqual([{ n: 1 }]);
    await client.end();
    await shared.stop();
    // Stopping a shared server is the owner's business: the service still answers.
    expect((await fetch(`http://127.0.0.1:${service.port}/health`)).status).toBe(200);

    const second = run({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(second.output()).toContain(`is in use by another process (pid ${service.child.pid})`);

    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
  }, 150_000);

  it('starts after the service was killed and left its database server running', async () => {
    const crashed = await startService(dataDir);
    const orphanPid = Number(readFileSync(pidFile(), 'utf8').split('\n')[0]);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    expect(isAlive(orphanPid)).toBe(true);

    const service = await startService(dataDir);
    expect(isAlive(orphanPid)).toBe(false);
    expect(await schoolNames(dataDir)).toEqual(['Embedded High']);
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
  }, 150_000);

  it('starts despite a stale postmaster.pid left by a crashed database server', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const stalePid = Number(gone.stdout);
    writeFileSync(pidFile(), `${stalePid}\n${join(dataDir, 'postgres', 'pgdata')}\n`);
    const service = await startService(dataDir);
    expect(await schoolNames(dataDir)).toEqual(['Embedded High']);
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
  }, 150_000);

  it('stops cleanly when its port is taken: the application closes before its database server', async () => {
    const port = await freePort();
    const taken = createServer().listen(port);
    await new Promise((resolve) => taken.once('listening', resolve));
    try {
      const service = run({ DATA_DIR: dataDir, PORT: String(port) });
      expect(await service.exited).toEqual({ code: 1, signal: null });
      const lines = service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg?: string; err?: { message: string } });
      // The one message is the cause; stopping the database under open connections added a warning.
      expect(lines.filter((line) => line.level >= 40 && line.msg !== 'Start failed')).toEqual([
        expect.objectContaining({ msg: expect.stringContaining('EADDRINUSE') }),
      ]);
      expect(lines.at(-1)).toMatchObject({
        msg: 'Start failed',
        err: { message: expect.stringContaining('EADDRINUSE') },
      });
      expect(existsSync(pidFile())).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 150_000);

  it('refuses to start on invalid configuration with one message naming the variable', async () => {
    const service = run({ DATA_DIR: dataDir, PORT: 'eighty' });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.output()).toBe('Invalid configuration: PORT must be a whole number, got "eighty"\n');
  });

  // Containers on one volume: each has its own PID namespace, so PIDs in postmaster.pid prove nothing there.
  (process.getuid?.() === 0 ? it : it.skip)(
    'refuses a second service in another PID namespace; the first keeps serving, its data intact',
    async () => {
      // Like a container: PIDs and System V shared memory of their own (PostgreSQL's own check uses both).
      const otherNamespace = ['unshare', '--pid', '--ipc', '--fork', '--mount-proc', '--kill-child'];
      const service = await startService(dataDir);
      const serverPidFile = readFileSync(pidFile(), 'utf8');
      await withEmbeddedDb(dataDir, (client) =>
        client.query(`INSERT INTO schools (name) VALUES ('Namespace High')`),
      );

      const second = run({ DATA_DIR: dataDir, PORT: String(await freePort()) }, otherNamespace);
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        second.exited,
        new Promise((resolve) => (timer = setTimeout(() => resolve('still running'), 40_000))),
      ]);
      clearTimeout(timer);
      expect(outcome).toEqual({ code: 1, signal: null });
      expect(second.output()).toContain(
        `The embedded database in ${join(dataDir, 'postgres')} is in use by another process (in another container`,
      );

      // A tool there reaches the server over the loopback it shares here, instead of starting its own.
      const cli = run({ DATA_DIR: dataDir }, otherNamespace, [
        join(ROOT, 'dist', 'cli', 'main.js'),
        'schools:list',
      ]);
      expect(await cli.exited).toEqual({ code: 0, signal: null });
      expect(cli.output()).toContain('"Namespace High"');

      expect((await fetch(`http://127.0.0.1:${service.port}/health`)).status).toBe(200);
      expect(readFileSync(pidFile(), 'utf8')).toBe(serverPidFile);
      expect(await schoolNames(dataDir)).toContain('Namespace High');
      service.child.kill('SIGTERM');
      expect(await service.exited).toEqual({ code: 0, signal: null });
    },
    90_000,
  );
});
