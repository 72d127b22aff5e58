#!/usr/bin/env node
/*
 * Benchmark of GET /tasks/:taskId/submissions/export.
 *
 *   node bench/export.js            10,000 members (80 % submitted), default heap
 *   node bench/export.js large      200,000 members, server under --max-old-space-size=128
 *   node bench/export.js all        both, one after the other
 *
 * Each scenario builds dist/ when it is stale, creates a fresh database `cts_bench_<random>` on DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres), starts `node dist/main.js` against it, seeds the
 * class with SQL, warms the route up on a tiny task, then times one export to its last byte while sampling
 * the server's VmRSS from /proc. It prints one line per scenario and stops everything it started.
 */
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { createHmac, randomBytes } = require('node:crypto');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const ADMIN_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const JWT_SECRET = randomBytes(32).toString('hex');
const SCENARIOS = {
  standard: { members: 10_000, heapMb: null },
  large: { members: 200_000, heapMb: 128 },
};
const RSS_SAMPLE_MS = 10;

/** Everything to undo, newest first, run on exit or Ctrl-C. */
const cleanups = [];
async function cleanUp() {
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch (error) {
      console.error(`cleanup: ${error.message}`);
    }
  }
}

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withClient(url, work) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
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

/** HS256 login token as the service issues it (`sub`, token version `ver`, 1 hour). */
function token(userId) {
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: userId, ver: 0, iat: now, exp: now + 3600 })}`;
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`;
}

function buildIfNeeded() {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.js')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('build failed');
}

async function startServer(databaseUrl, heapMb) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'cts-bench-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const args = [...(heapMb ? [`--max-old-space-size=${heapMb}`] : []), join(ROOT, 'dist', 'main.js')];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      JWT_SECRET,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    if ((await request(port, '/health').catch(() => ({ status: 0 }))).status === 200) break;
    if (Date.now() > deadline) throw new Error('server did not become healthy within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { port, pid: child.pid, exited };
}

/** GET that drains the body; answers status, byte count, CRLF count and the time to the last byte. */
function request(port, path, auth) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.get(
      { host: '127.0.0.1', port, path, headers: auth ? { Authorization: `Bearer ${auth}` } : {} },
      (res) => {
        let bytes = 0;
        let lines = 0;
        let previousEndsWithCr = false;
        res.on('data', (chunk) => {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
            if ((i === 0 && previousEndsWithCr) || chunk[i - 1] === 13) lines++;
          }
          previousEndsWithCr = chunk[chunk.length - 1] === 13;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            bytes,
            lines,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

/** One class: an owner, `members` MEMBERs, a task where 80 % submitted, and a tiny task for the warm-up. */
async function seed(databaseUrl, members) {
  return withClient(databaseUrl, async (db) => {
    await db.query('BEGIN');
    const {
      rows: [school],
    } = await db.query(`INSERT INTO schools (name) VALUES ('Bench School') RETURNING id`);
    const {
      rows: [owner],
    } = await db.query(
      `INSERT INTO users (email, password_hash, nickname, timezone) VALUES ('owner@bench.test', 'x', 'Owner', 'Asia/Shanghai')
       RETURNING id`,
    );
    const {
      rows: [cls],
    } = await db.query(`INSERT INTO classes (name, owner_id) VALUES ('Bench, "class" 1', $1) RETURNING id`, [
      owner.id,
    ]);
    await db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'OWNER')`, [
      cls.id,
      owner.id,
    ]);
    const {
      rows: [task, tiny],
    } = await db.query(
      `INSERT INTO tasks (class_id, title, is_published, published_at)
       VALUES ($1, 'Essay: "Streams", part 1', true, now()), ($1, 'Warm-up', true, now()) RETURNING id`,
      [cls.id],
    );
    await db.query(
      `INSERT INTO users (email, password_hash, nickname, school_id, student_id)
       SELECT 'student' || n || '@bench.test', 'x', CASE WHEN n % 10 = 0 THEN NULL ELSE 'Student ' || n || ' 学生' END,
              $1, 'S' || lpad(n::text, 7, '0')
         FROM generate_series(1, $2) n`,
      [school.id, members],
    );
    await db.query(
      `INSERT INTO class_members (class_id, user_id, role)
       SELECT $1, id, CASE WHEN email = 'student1@bench.test' THEN 'ADMIN' ELSE 'MEMBER' END FROM users WHERE email LIKE 'student%'`,
      [cls.id],
    );
    await db.query(
      `INSERT INTO submissions (task_id, user_id, content, first_submitted_at, last_updated_at, score)
       SELECT $1, id, 'answer', now() - interval '2 days', now() - interval '1 day', (random() * 10000)::int / 100.0
         FROM users WHERE email LIKE 'student%' AND random() < 0.8`,
      [task.id],
    );
    await db.query('COMMIT');
    await db.query('ANALYZE');
    return { ownerId: owner.id, taskId: task.id, tinyTaskId: tiny.id };
  });
}

async function runScenario(name) {
  const { members, heapMb } = SCENARIOS[name];
  const database = `cts_bench_${randomBytes(4).toString('hex')}`;
  await withClient(ADMIN_URL, (db) => db.query(`CREATE DATABASE "${database}"`));
  cleanups.push(() =>
    withClient(ADMIN_URL, (db) => db.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)),
  );
  const databaseUrl = withDatabase(ADMIN_URL, database);

  const server = await startServer(databaseUrl, heapMb);
  const seedStarted = Date.now();
  const { ownerId, taskId, tinyTaskId } = await seed(databaseUrl, members);
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  const auth = token(ownerId);

  const warmUp = await request(server.port, `/tasks/${tinyTaskId}/submissions/export`, auth);
  if (warmUp.status !== 200) throw new Error(`warm-up export answered ${warmUp.status}`);
  await new Promise((resolve) => setTimeout(resolve, 500));

  const baseline = rssOf(server.pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(server.pid) ?? 0);
  }, RSS_SAMPLE_MS);
  const result = await request(server.port, `/tasks/${taskId}/submissions/export`, auth);
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(server.pid) ?? 0);

  const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);
  const ok = result.status === 200 && result.lines === members + 2;
  console.log(
    `export ${name}: ${ok ? 'ok' : 'FAILED'} status=${result.status} members=${members + 1} rows=${result.lines - 1} ` +
      `size=${mb(result.bytes)}MB time=${result.ms.toFixed(0)}ms rate=${Math.round(((members + 1) / result.ms) * 1000)} rows/s ` +
      `rss_baseline=${mb(baseline)}MB rss_peak=${mb(peak)}MB rss_growth=${mb(peak - baseline)}MB ` +
      `heap_limit=${heapMb ? `${heapMb}MB` : 'default'} seed=${seedSeconds.toFixed(1)}s`,
  );
  await cleanUp();
  if (!ok) process.exitCode = 1;
}

async function main() {
  const mode = process.argv[2] || 'standard';
  const names = mode === 'all' ? Object.keys(SCENARIOS) : [mode];
  if (!names.every((name) => SCENARIOS[name])) {
    console.error('usage: node bench/export.js [standard|large|all]');
    process.exit(2);
  }
  buildIfNeeded();
  for (const name of names) await runScenario(name);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    cleanUp().finally(() => process.exit(130));
  });
}

main().catch(async (error) => {
  console.error(error);
  await cleanUp();
  process.exit(1);
});
