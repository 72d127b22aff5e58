#!/usr/bin/env node
/*
 * Benchmark of the class gradebook: a class of 1,000 MEMBERs and 200 published tasks, about half the cells
 * submitted and a third graded.
 *
 *   node bench/gradebook.js [rounds] [seconds]     default 3 rounds of 5 s
 *
 * 1. GET /classes/:classId/gradebook (pages of 50 rows, the first five pages taken in turn) against
 *    GET /tasks/:taskId of the same class, interleaved in rounds at the same concurrency: p50 of each, their
 *    ratio (target: at most 5), and the statements per page (target: 1).
 * 2. GET /classes/:classId/gradebook.csv timed to its last byte while the server's VmRSS is sampled (targets:
 *    within 5 s, RSS growth at most 50 MB).
 *
 * It builds dist/ when stale, creates a fresh database `cts_bench_<random>` on DATABASE_URL, starts
 * `node dist/main.js` against it and stops everything it started.
 */
'use strict';
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { request } = require('./lib/http');
const { median } = require('./lib/load');
const { statementsPerRequest, throughputRounds, timeDownload } = require('./lib/scenarios');
const { seedGradebook } = require('./lib/seed');
const { buildIfNeeded, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const MEMBERS = 1000;
const TASKS = 200;
const PAGE = 50;
const CONNECTIONS = 8;

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

/** The cursors of the first `pages` pages (the first one has none). */
async function pageCursors(port, classId, auth, pages) {
  const cursors = [null];
  while (cursors.length < pages) {
    const cursor = cursors[cursors.length - 1];
    const res = await request(
      port,
      `/classes/${classId}/gradebook?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`,
      { auth, json: true },
    );
    if (res.status !== 200) throw new Error(`gradebook answered ${res.status}`);
    if (res.body.rows.length !== PAGE) throw new Error(`a page of ${res.body.rows.length} rows`);
    if (res.body.tasks.length !== TASKS) throw new Error(`${res.body.tasks.length} columns`);
    cursors.push(res.body.nextCursor);
  }
  return cursors;
}

async function timeCsv(server, classId, auth) {
  const path = `/classes/${classId}/gradebook.csv`;
  const result = await timeDownload(server, { warmUpPath: path, path, auth });
  return { ...result, ok: result.status === 200 && result.lines === MEMBERS + 1 };
}

runMain(async () => {
  const rounds = Number(process.argv[2] ?? 3);
  const duration = Number(process.argv[3] ?? 5);
  buildIfNeeded();
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, withProbe: true });
  const seeded = await withClient(db.url, async (client) => {
    const data = await seedGradebook(client, MEMBERS, TASKS);
    await client.query('VACUUM ANALYZE');
    return data;
  });
  const auth = bearer(seeded.owner.id);
  const cursors = await pageCursors(server.port, seeded.classId, auth, 5);
  const gradebook = cursors.map((cursor) => ({
    path: `/classes/${seeded.classId}/gradebook?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`,
    headers: { Authorization: auth },
  }));
  const task = [{ path: `/tasks/${seeded.taskId}`, headers: { Authorization: auth } }];

  const statements = await statementsPerRequest(server, gradebook, { count: 5 });
  const results = await throughputRounds(
    server,
    [
      { key: 'task', name: 'GET /tasks/:taskId', variants: task },
      { key: 'gradebook', name: `GET /classes/:classId/gradebook (${PAGE} rows)`, variants: gradebook },
    ],
    { rounds, duration, connections: CONNECTIONS, referenceKey: 'task', log: (line) => console.log(line) },
  );
  const ratios = results.gradebook.runs.map((run, i) => run.p50 / results.task.runs[i].p50);
  const p50Ratio = median(ratios);
  console.log(
    `gradebook page: p50 ${results.gradebook.p50} ms (GET /tasks/:taskId ${results.task.p50} ms), ` +
      `p50 ratio ${p50Ratio.toFixed(2)} (target ≤ 5), ${statements.perRequest} statements/page, ` +
      `${results.gradebook.rps.toFixed(0)} req/s vs ${results.task.rps.toFixed(0)} req/s, ` +
      `CPU/req node ${results.gradebook.cpuNode.toFixed(0)} µs + PG ${results.gradebook.cpuPg.toFixed(0)} µs`,
  );

  const csv = await timeCsv(server, seeded.classId, auth);
  console.log(
    `gradebook CSV: ${csv.ok ? 'ok' : 'FAILED'} status=${csv.status} lines=${csv.lines} size=${mb(csv.bytes)}MB ` +
      `time=${csv.ms.toFixed(0)}ms (target ≤ 5000) rss_growth=${mb(csv.rssGrowth)}MB (target ≤ 50)`,
  );
  await server.stop();
  await db.drop();
  if (!csv.ok) process.exitCode = 1;
});
