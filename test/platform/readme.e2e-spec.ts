import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, dropTestDatabase, withDatabase } from '../utils/database';
import { freePort } from '../utils/free-port';

/**
 * README's walk-through as a newcomer runs it: the built service with its log in `server.log`, then the
 * second terminal's commands pasted at once, as printed (only the port differs).
 */
const ROOT = join(__dirname, '..', '..');

/** The ```sh block of README.md that begins with `API=`. */
function walkThrough(): string {
  const blocks = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)];
  const block = blocks.map((match) => match[1]).find((text) => text.startsWith('API='));
  if (!block) throw new Error('README.md has no walk-through block starting with API=');
  return block;
}

describe('README walk-through', () => {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  let database: string;
  let dir: string;
  let port: number;
  let server: ChildProcess;

  beforeAll(async () => {
    database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
    dir = mkdtempSync(join(tmpdir(), 'cts-readme-'));
    port = await freePort();
    const log = openSync(join(dir, 'server.log'), 'w');
    server = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        DATABASE_URL: withDatabase(adminUrl, database),
        DATA_DIR: join(dir, 'data'),
      },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    const deadline = Date.now() + 60_000;
    while ((await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status !== 200) {
      if (Date.now() > deadline || server.exitCode !== null)
        throw new Error(`The service did not start:\n${readFileSync(join(dir, 'server.log'), 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 180_000);

  afterAll(async () => {
    if (server?.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    if (database) await dropTestDatabase(adminUrl, database);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('registers, logs in and creates a class when its commands are pasted at once', () => {
    // Each answer on a line of its own, as a terminal shows them one after the other.
    const script = `curl() { command curl "$@"; echo; }\n${walkThrough()}`.replace(
      'http://localhost:3000',
      `http://127.0.0.1:${port}`,
    );
    const run = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    const answers = run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{') || line.startsWith('['))
      .map((line) => JSON.parse(line) as unknown);
    expect(answers).toEqual([
      { message: expect.any(String) },
      {
        token: expect.any(String),
        user: expect.objectContaining({ email: 'ada@example.com', nickname: 'Ada' }),
      },
      expect.objectContaining({ name: 'Physics 101', isPersonal: false, myRole: 'OWNER' }),
      [
        expect.objectContaining({ name: 'Personal', isPersonal: true }),
        expect.objectContaining({ name: 'Physics 101', isPersonal: false }),
      ],
    ]);
  }, 90_000);
});
