#!/usr/bin/env node
/*
 * Benchmark of GET /tasks/:taskId/submissions/export alone (bench/run.js runs the same measurement).
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
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { timeExport } = require('./lib/scenarios');
const { seedRoster } = require('./lib/seed');
const { buildIfNeeded, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const SCENARIOS = {
  standard: { members: 10_000, heapMb: null },
  large: { members: 200_000, heapMb: 128 },
};

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

async function runScenario(name) {
  const { members, heapMb } = SCENARIOS[name];
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, heapMb });
  const seedStarted = Date.now();
  const data = await withClient(db.url, async (client) => {
    const seeded = await seedRoster(client, members);
    await client.query('VACUUM ANALYZE');
    return seeded;
  });
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  const result = await timeExport(server, {
    taskId: data.taskId,
    warmUpTaskId: data.warmUpTaskId,
    auth: bearer(data.owner.id),
    members,
  });
  console.log(
    `export ${name}: ${result.ok ? 'ok' : 'FAILED'} status=${result.status} members=${members + 1} rows=${result.rows} ` +
      `size=${mb(result.bytes)}MB time=${result.ms.toFixed(0)}ms rate=${Math.round(((members + 1) / result.ms) * 1000)} rows/s ` +
      `rss_baseline=${mb(result.rssBaseline)}MB rss_peak=${mb(result.rssPeak)}MB rss_growth=${mb(result.rssGrowth)}MB ` +
      `heap_limit=${heapMb ? `${heapMb}MB` : 'default'} seed=${seedSeconds.toFixed(1)}s`,
  );
  await server.stop();
  await db.drop();
  if (!result.ok) process.exitCode = 1;
}

runMain(async () => {
  const mode = process.argv[2] || 'standard';
  const names = mode === 'all' ? Object.keys(SCENARIOS) : [mode];
  if (!names.every((name) => SCENARIOS[name])) {
    console.error('usage: node bench/export.js [standard|large|all]');
    process.exit(2);
  }
  buildIfNeeded();
  for (const name of names) await runScenario(name);
});
