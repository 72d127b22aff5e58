import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The container image built and run with podman (scripts/container-test.sh): health on the embedded
 * database, registration and login, the CLI beside the service, the HEALTHCHECK, SIGTERM, a restart on the
 * same volume, and no TypeScript compiler or ts-node in the image. Takes
 * minutes and needs root and podman, so it runs only with CONTAINER_TESTS=1.
 */
const ROOT = join(__dirname, '..', '..');
const enabled = process.env.CONTAINER_TESTS === '1';
const describeContainer = enabled ? describe : describe.skip;

const EXPECTED_CHECKS = [
  'no typescript, no ts-node in the image',
  '/health 200 with the embedded database on a volume',
  'register, login and an authenticated call',
  'the operator CLI beside the running service, on its database',
  'HEALTHCHECK healthy',
  'SIGTERM: exit status 0',
  'a new container on the volume finds the account again',
  'a second container on the same volume refuses to start; the first keeps serving',
];

function runScript(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [join(ROOT, 'scripts', 'container-test.sh')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describeContainer(
  'container image with podman (skipped unless CONTAINER_TESTS=1: needs root and podman, takes minutes)',
  () => {
    it('builds, serves, stops cleanly and holds no TypeScript tooling', async () => {
      const { code, output } = await runScript();
      const measures = output.split('\n').filter((line) => line.startsWith('measure:'));
      process.stdout.write(`${measures.join('\n')}\n`);
      // On a failure the script's last lines are the message.
      expect(code === 0 ? 'exit status 0' : `exit status ${code}:\n${output.slice(-4000)}`).toBe(
        'exit status 0',
      );
      for (const check of EXPECTED_CHECKS) expect(output).toContain(`ok: ${check}\n`);
      expect(output).toContain('container test passed');
      // The script leaves no container or volume behind (its image stays, as the build cache).
      const left = spawnSync('podman', ['ps', '-a', '--format', '{{.Names}}'], { encoding: 'utf8' });
      const volumes = spawnSync('podman', ['volume', 'ls', '--format', '{{.Name}}'], { encoding: 'utf8' });
      expect(`${left.stdout}${volumes.stdout}`).not.toContain('classroom-tasks-test-');
    }, 1_800_000);
  },
);

/**
 * What can be checked without a container engine: the Dockerfile's default base is on the Node major CI
 * and package.json name, and its guard against development tools in the final stage does fail.
 */
describe('container image: the Dockerfile, read', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const runtimeStage = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
  /** The runtime stage's `RUN` that fails on a development tool, as the shell runs it (lines joined). */
  const guard = /^RUN (for tool in [\s\S]*?done)$/m.exec(runtimeStage)?.[1].replace(/\\\n/g, '');

  it('names one Node major in the Dockerfile, engines, the README and CI, and one npm for the build', () => {
    const major = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(dockerfile)?.[1];
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
      packageManager: string;
      devDependencies: Record<string, string>;
    };
    expect(pkg.engines.node).toMatch(new RegExp(`^\\^${major}\\.\\d+\\.\\d+$`));
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${major}\\.`));
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`on Node.js ${major}`);
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).toContain('scripts/image-node.sh');
    expect(ci).toContain('npm ci --engine-strict');
    // Every install and the prune of the image run on the npm that made the lockfile, not the base's.
    expect(pkg.packageManager).toMatch(/^npm@\d+\.\d+\.\d+$/);
    expect(dockerfile).toContain(
      `npm install --global --no-audit --no-fund "$(node -p 'require("./package.json").packageManager')"`,
    );
    expect(dockerfile).toContain('npm ci --engine-strict');
  });

  it('stops the build when a development tool resolves in the final stage, and only then', () => {
    expect(guard).toContain('typescript ts-node mjml');
    const app = mkdtempSync(join(tmpdir(), 'cts-image-'));
    try {
      const runGuard = () => spawnSync('sh', ['-c', guard!], { cwd: app, encoding: 'utf8' });
      mkdirSync(join(app, 'node_modules', 'pg'), { recursive: true });
      expect(runGuard().status).toBe(0);
      for (const tool of ['typescript', join('typeorm', 'node_modules', 'ts-node')]) {
        const dir = join(app, 'node_modules', tool);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'package.json'), '{}');
        const found = runGuard();
        expect([found.status, found.stderr]).toEqual([
          1,
          expect.stringMatching(/is in the production image/),
        ]);
        rmSync(dir, { recursive: true });
      }
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});
