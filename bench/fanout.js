#!/usr/bin/env node
/*
 * Fan-out bench: publishes tasks in a class of 10,000 members and reports the publish call's latency and the
 * time until every member's inbox row exists (status SENT).
 *
 *   npm run build && node bench/fanout.js
 *
 * Environment: DATABASE_URL (admin connection to a PostgreSQL server; a fresh database is created and
 * dropped), MEMBERS (default 10000), PUBLISHES (default 10), DELIVERY_POLL_INTERVAL_MS and SCHEDULER_CRON
 * (passed to the server; defaults of the service otherwise).
 */
'use strict';

const { spawn } = require('node:child_process');
const { createHmac, randomBytes } = require('node:crypto');
const { existsSync, mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const ADMIN_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const MEMBERS = Number(process.env.MEMBERS || 10000);
const PUBLISHES = Number(process.env.PUBLISHES || 10);
const JWT_SECRET = randomBytes(32).toString('hex');

function databaseUrl(name) {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
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
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** HS256 login token as the service issues it: `sub` and the user's token version `ver`. */
function signToken(userId) {
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: userId, ver: 0, iat: now, exp: now + 3600 })}`;
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForHealth(base, server) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`server exited with code ${server.exitCode}`);
    try {
      const res = await fetch(`${base}/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error('server did not become healthy within 60 s');
}

/** One owner, a shared class, and MEMBERS members, each a user with a personal class, in a few statements. */
async function seed(client) {
  await client.query('BEGIN');
  const {
    rows: [owner],
  } = await client.query(
    `INSERT INTO users (email, password_hash, nickname) VALUES ('owner@bench.test', 'x', 'Bench owner') RETURNING id`,
  );
  const {
    rows: [cls],
  } = await client.query(
    `INSERT INTO classes (name, owner_id, invite_code) VALUES ('Bench class', $1, 'BENCH23456') RETURNING id`,
    [owner.id],
  );
  await client.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'OWNER')`, [
    cls.id,
    owner.id,
  ]);
  await client.query(
    `WITH created AS (
       INSERT INTO users (email, password_hash, timezone)
       SELECT 'member' || g || '@bench.test', 'x', (ARRAY['UTC', 'Europe/Berlin', 'Asia/Shanghai', 'America/New_York'])[1 + g % 4]
         FROM generate_series(1, $2::int) g
       RETURNING id
     )
     INSERT INTO class_members (class_id, user_id, role) SELECT $1, id, 'MEMBER' FROM created`,
    [cls.id, MEMBERS],
  );
  await client.query('COMMIT');
  return { ownerId: owner.id, classId: cls.id };
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) {
    throw new Error('dist/main.js is missing: run `npm run build` first');
  }
  const database = `cts_bench_${randomBytes(4).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'cts-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let server = null;
  await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE "${database}"`));
  try {
    const env = {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl(database),
      DATA_DIR: dataDir,
      JWT_SECRET,
      LOG_LEVEL: 'warn',
    };
    delete env.SMTP_URL;
    server = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitForHealth(base, server);

    const results = await withClient(databaseUrl(database), async (client) => {
      const seedStarted = Date.now();
      const { ownerId, classId } = await seed(client);
      console.log(`seeded ${MEMBERS} members in ${Date.now() - seedStarted} ms`);
      const auth = `Bearer ${signToken(ownerId)}`;
      const recipients = MEMBERS + 1;
      const runs = [];
      for (let i = 1; i <= PUBLISHES; i += 1) {
        const started = performance.now();
        const res = await fetch(`${base}/classes/${classId}/tasks`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            title: `Bench task ${i}`,
            dueAt: new Date(Date.now() + 7 * 86400_000).toISOString(),
          }),
        });
        const publishMs = performance.now() - started;
        if (res.status !== 201) throw new Error(`publish answered ${res.status}: ${await res.text()}`);
        const task = await res.json();
        for (;;) {
          const {
            rows: [{ n }],
          } = await client.query(
            `SELECT count(*)::int AS n FROM notifications WHERE task_id = $1 AND status = 'SENT'`,
            [task.id],
          );
          if (n >= recipients) break;
          if (performance.now() - started > 120_000)
            throw new Error(`only ${n} of ${recipients} inbox rows after 120 s`);
          await sleep(20);
        }
        const inboxMs = performance.now() - started;
        runs.push({ publishMs, inboxMs });
        console.log(
          `publish ${i}: call ${publishMs.toFixed(1)} ms, ${recipients} inbox rows after ${inboxMs.toFixed(0)} ms`,
        );
      }
      return runs;
    });

    const publish = results.map((run) => run.publishMs);
    const inbox = results.map((run) => run.inboxMs);
    const summary = {
      members: MEMBERS,
      publishes: PUBLISHES,
      publishLatencyMs: {
        p50: percentile(publish, 50),
        p95: percentile(publish, 95),
        max: Math.max(...publish),
      },
      allInboxRowsMs: { p50: percentile(inbox, 50), p95: percentile(inbox, 95), max: Math.max(...inbox) },
    };
    console.log(
      JSON.stringify(
        summary,
        (key, value) => (typeof value === 'number' ? Math.round(value * 10) / 10 : value),
        2,
      ),
    );
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      if (server.exitCode === null) server.kill('SIGKILL');
    }
    await withClient(ADMIN_URL, (client) =>
      client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
    );
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
