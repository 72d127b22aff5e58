'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { onCleanup } = require('./cleanup');
const { request } = require('./http');
const { JWT_SECRET } = require('./tokens');
const probe = require('./probe');

const ROOT = join(__dirname, '..', '..');
/** Server logs and CPU profiles, when asked for (git-ignored). */
const TMP_DIR = join(ROOT, 'bench', '.tmp');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Builds dist/ when it is missing or older than its sources (the same check as `npm start`). */
function buildIfNeeded() {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.js')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('build failed');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process in bytes, or null once it is gone. */
function rssOf(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc, 10 ms ticks). */
function cpuMsOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Processes whose command line contains `text` (PostgreSQL names its backends after their database). */
function processesMatching(text) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * CPU used so far by the server process and by the PostgreSQL backends serving database `database`, in ms;
 * the difference of two snapshots divided by the requests in between is the CPU cost of a request.
 */
function cpuSnapshot(pid, database) {
  const pg = new Map();
  for (const backend of processesMatching(`postgres ${database} `)) {
    try {
      pg.set(backend, cpuMsOf(backend));
    } catch {
      // gone meanwhile
    }
  }
  return { node: cpuMsOf(pid), pg };
}

/** CPU ms between two snapshots: { node, pg } (backends present in the later one only count from 0). */
function cpuBetween(before, after) {
  let pg = 0;
  for (const [backend, ms] of after.pg) pg += ms - (before.pg.get(backend) ?? 0);
  return { node: after.node - before.node, pg };
}

/**
 * Starts `node dist/main.js` in production mode against `databaseUrl` and waits until GET /health answers.
 * Options: `heapMb` (--max-old-space-size), `env` (more variables), `nodeArgs` (e.g. --cpu-prof),
 * `probe` (statement counter and event-loop delay, see probe-preload.js), `logFile` (default /dev/null;
 * logging stays at LOG_LEVEL=info, so every request still writes its line), `startTimeoutMs` (60 s), `main`
 * (the entry file, default dist/main.js: a bench may start a variant of the build).
 * Answers { port, pid, probe, stop() }; the server is stopped at clean-up at the latest.
 */
async function startServer({
  databaseUrl,
  heapMb = null,
  env = {},
  nodeArgs = [],
  withProbe = false,
  logFile,
  startTimeoutMs = 60_000,
  main = join(ROOT, 'dist', 'main.js'),
} = {}) {
  const port = await freePort();
  const probePort = withProbe ? await freePort() : null;
  const dataDir = mkdtempSync(join(tmpdir(), 'cts-bench-'));
  const removeDataDir = onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  if (logFile) mkdirSync(TMP_DIR, { recursive: true });
  const logFd = openSync(logFile ?? '/dev/null', 'w');
  const args = [
    ...(heapMb ? [`--max-old-space-size=${heapMb}`] : []),
    ...(withProbe ? ['--require', probe.PRELOAD] : []),
    ...nodeArgs,
    // e.g. BENCH_NODE_ARGS=--max-semi-space-size=32 to try a V8 flag on the server under test.
    ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
    main,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      JWT_SECRET,
      ...(probePort ? { BENCH_PROBE_PORT: String(probePort) } : {}),
      ...env,
    },
    stdio: ['ignore', logFd, 'inherit'],
  });
  closeSync(logFd);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const stopChild = onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  });
  const stop = async () => {
    await stopChild();
    await removeDataDir();
  };
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    if ((await request(port, '/health').catch(() => ({ status: 0 }))).status === 200) break;
    if (Date.now() > deadline)
      throw new Error(`server did not become healthy within ${startTimeoutMs / 1000} s`);
    await sleep(200);
  }
  const database = new URL(databaseUrl).pathname.slice(1);
  return {
    port,
    pid: child.pid,
    probe: probePort ? probe.client(probePort) : null,
    exited,
    stop,
    /** CPU of the server and of its database backends: call, then call the answer for the ms used since. */
    cpu() {
      const before = cpuSnapshot(child.pid, database);
      return () => cpuBetween(before, cpuSnapshot(child.pid, database));
    },
  };
}

module.exports = { ROOT, TMP_DIR, buildIfNeeded, cpuMsOf, cpuSnapshot, freePort, rssOf, sleep, startServer };
