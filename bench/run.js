#!/usr/bin/env node
/*
 * The benchmark suite (`npm run bench`); bench/README.md explains the scenarios and how to read them.
 *
 *   node bench/run.js [--quick] [--only=floor,counts,throughput,login,export,fanout,large] [--no-write] [--logs]
 *
 * --quick      one round of 3 s per throughput scenario, one login flood, three publications (for trying a
 *              change; not comparable with a full run, and bench/results.md is left alone)
 * --only       run the named sections only (results.md is left alone)
 * --no-write   print the table only
 * --logs       server logs to bench/.tmp/server.log instead of /dev/null
 *
 * Builds dist/ when stale, creates fresh databases on DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres), starts `node dist/main.js` (NODE_ENV=production,
 * LOG_LEVEL=info) with the probe preload (bench/lib/probe-preload.js), seeds with SQL, measures, prints one
 * table and writes it to bench/results.md, keeping the hand-written findings below the marker. Everything
 * started is stopped and dropped at the end, also on failure or Ctrl-C.
 */
'use strict';
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { measureFloor } = require('./hello');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { expectStatus } = require('./lib/http');
const { load, median } = require('./lib/load');
const { fixed, loadAverage, machine, percent, table } = require('./lib/report');
const {
  loginFlood,
  measureFanout,
  statementsPerRequest,
  throughputRounds,
  timeExport,
} = require('./lib/scenarios');
const { seedMain, seedRoster } = require('./lib/seed');
const { ROOT, TMP_DIR, buildIfNeeded, sleep, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');
const { conditionalScenarios, cycle, throughputScenarios } = require('./lib/workloads');

const SECTIONS = ['floor', 'counts', 'throughput', 'login', 'export', 'fanout', 'large'];
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
if (only && !only.every((s) => SECTIONS.includes(s))) {
  console.error(`--only takes ${SECTIONS.join(',')}`);
  process.exit(2);
}
const enabled = (section) => !only || only.includes(section);
const QUICK = flag('quick');
const ROUNDS = QUICK ? 1 : 3;
const DURATION = QUICK ? 3 : 10;
const CONNECTIONS = 32;
const PUBLISHES = QUICK ? 3 : 10;
const EXPORTS = QUICK ? 1 : 3;
const LARGE_EXPORT_MEMBERS = 200_000;
const RESULTS = join(ROOT, 'bench', 'results.md');
const FINDINGS_MARKER = '<!-- findings: kept by bench/run.js -->';

const log = (message) => console.log(`[bench] ${message}`);
const mb = (bytes) => bytes / 1024 / 1024;

/** Rows of the one results table. */
const rows = [];
function row(scenario, fields) {
  rows.push({ scenario, result: '', target: '', met: null, ...fields });
}

/** Statement counts that must not grow with the data (probe counts, requests one after another). */
async function countsSection(server, data) {
  const owner = { authorization: bearer(data.owner.id) };
  const member = { authorization: bearer(data.members[0].id) };
  const count = async (path, headers) => (await statementsPerRequest(server, [{ path, headers }])).perRequest;
  const compare = async (name, [small, large], labels, headers) => {
    const a = await count(small, headers);
    const b = await count(large, headers);
    row(name, {
      sql: `${fixed(a, 1)} / ${fixed(b, 1)}`,
      result: `${labels[0]}: ${fixed(a, 1)} statements, ${labels[1]}: ${fixed(b, 1)}`,
      target: 'same statement count',
      met: a === b,
    });
  };
  const { roster10, roster300 } = data;
  await compare(
    'GET /classes/:classId/tasks, 3 vs 300 tasks',
    [`/classes/${data.smallClassId}/tasks`, `/classes/${data.largeClassId}/tasks`],
    ['3 tasks', '300 tasks'],
    member,
  );
  await compare(
    'GET /tasks/:taskId/submissions, 10 vs 300 members',
    [`/tasks/${roster10.taskId}/submissions`, `/tasks/${roster300.taskId}/submissions`],
    ['10 members', '300 members'],
    owner,
  );
  await compare(
    'GET /tasks/:taskId/submissions/export, 10 vs 300 members',
    [`/tasks/${roster10.taskId}/submissions/export`, `/tasks/${roster300.taskId}/submissions/export`],
    ['10 members', '300 members'],
    owner,
  );
}

async function throughputSection(server, scenarios) {
  const sql = {};
  for (const scenario of scenarios)
    sql[scenario.key] = (
      await statementsPerRequest(server, scenario.variants, { expected: scenario.status ?? 200 })
    ).perRequest;
  log(`throughput: ${ROUNDS} round(s) of ${scenarios.length} scenarios, -c ${CONNECTIONS} -d ${DURATION}`);
  for (const scenario of scenarios)
    await load(server.port, scenario.variants, { connections: 8, duration: 1 });
  const results = await throughputRounds(server, scenarios, {
    rounds: ROUNDS,
    duration: DURATION,
    connections: CONNECTIONS,
    referenceKey: 'live',
    log,
  });
  for (const scenario of scenarios) {
    const r = results[scenario.key];
    const t = scenario.target;
    const checks = [];
    const targets = [];
    if (t?.ratio) {
      checks.push(r.ratio >= t.ratio);
      targets.push(`≥ ${percent(t.ratio)}`);
    }
    if (t?.p99) {
      checks.push(r.p99 <= t.p99);
      targets.push(`p99 ≤ ${t.p99} ms`);
    }
    let result = `runs: ${r.runs.map((x) => x.rps.toFixed(0)).join(', ')} req/s`;
    if (scenario.key === 'inbox15') {
      const slower = r.p50 / results.inbox1.p50;
      result += `; p50 ${slower.toFixed(2)}× page 1`;
      checks.push(slower <= 1.5);
      targets.push('p50 ≤ 1.5× page 1');
    }
    row(scenario.name, {
      rps: r.rps,
      p50: r.p50,
      p99: r.p99,
      ratio: r.ratio,
      sql: sql[scenario.key],
      cpu: `${fixed(r.cpuNode)} + ${fixed(r.cpuPg)}`,
      result,
      target: t ? targets.join(', ') : 'reference',
      met: t ? checks.every(Boolean) : null,
    });
  }
}

async function loginSection(server, data, scenarios) {
  log('login flood: 100 logins/s for 10 s against a steady 100 req/s of GET task and inbox');
  const others = ['task', 'inbox1'].flatMap((key) => scenarios.find((s) => s.key === key).variants);
  // Every login from its own client address (X-Forwarded-For is trusted from loopback), so the per-IP
  // limits (50/min per IP, 10/min per IP and e-mail) do not simply reject the flood.
  const logins = cycle([data.owner, data.admin, ...data.members], 1000, (user, i) => ({
    method: 'POST',
    path: '/auth/login',
    headers: { 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
    body: { email: user.email, password: data.password },
  }));
  // Logins carry no token: nothing to warm.
  const loginSql = (await statementsPerRequest(server, logins, { count: 3, warm: false })).perRequest;
  // Five pairs: a p99 of 1,000 requests moves a lot from one 10 s window to the next on a shared machine.
  const pairs = await loginFlood(server, { others, logins, rounds: QUICK ? 1 : 5, log });
  const middle = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor(pairs.length / 2)];
  const statuses = Object.entries(middle.flood.statusCodes)
    .map(([code, n]) => `${n}× ${code}`)
    .join(', ');
  row('other endpoints during a login flood (100 logins/s for 10 s)', {
    rps: middle.during.rps,
    p50: middle.during.p50,
    p99: middle.during.p99,
    sql: loginSql,
    result:
      `steady 100 req/s of GET task + inbox, p99 before → during: ` +
      `${pairs.map((p) => `${p.before.p99} → ${p.during.p99} ms`).join('; ')} (median ${middle.ratio.toFixed(2)}×); ` +
      `event-loop delay p99 ${middle.delayBefore.p99} → ${middle.delayDuring.p99} ms; ` +
      `logins answered ${pairs.map((p) => `${p.flood.rps.toFixed(0)}/s`).join(', ')} (${statuses}, ` +
      `${middle.flood.timeouts} still waiting after 10 s, p50 ${middle.flood.p50} ms); SQL/req: one login`,
    target: 'p99 < 2× normal',
    met: middle.ratio < 2,
  });
}

async function exportSection(server, data) {
  log('export of 10,000 members');
  const auth = bearer(data.owner.id);
  const runs = [];
  for (let i = 0; i < EXPORTS; i += 1) {
    runs.push(
      await timeExport(server, {
        taskId: data.big.taskId,
        warmUpTaskId: data.roster10.taskId,
        auth,
        members: 10_000,
      }),
    );
  }
  const ms = median(runs.map((r) => r.ms));
  const growth = Math.max(...runs.map((r) => r.rssGrowth));
  const sql = await statementsPerRequest(
    server,
    [{ path: `/tasks/${data.big.taskId}/submissions/export`, headers: { authorization: auth } }],
    {
      count: 1,
    },
  );
  row('export of 10,000 members (CSV)', {
    sql: sql.perRequest,
    result:
      `median ${fixed(ms)} ms of ${runs.map((r) => fixed(r.ms)).join(', ')}; ${runs[0].rows} rows, ` +
      `${fixed(mb(runs[0].bytes), 1)} MB; RSS growth at most ${fixed(mb(growth), 1)} MB`,
    target: '≤ 2 s, RSS growth ≤ 50 MB',
    met: runs.every((r) => r.ok) && ms <= 2000 && mb(growth) <= 50,
  });
}

async function fanoutSection(server, db, data) {
  log(`publication fan-out: ${PUBLISHES} tasks to 10,000 members`);
  const f = await measureFanout(server, db.url, {
    classId: data.big.classId,
    auth: bearer(data.owner.id),
    recipients: 10_001,
    publishes: PUBLISHES,
    log,
  });
  row('publish to 10,000 members (POST /classes/:classId/tasks)', {
    p50: f.callP50,
    result:
      `call p50 ${fixed(f.callP50)} ms, p95 ${fixed(f.callP95)} ms; all 10,001 inbox rows SENT after ` +
      `p50 ${fixed(f.inboxP50 / 1000, 1)} s, max ${fixed(f.inboxMax / 1000, 1)} s (${PUBLISHES} publications)`,
    target: 'call p95 ≤ 200 ms, inbox ≤ 5 s',
    met: f.callP95 <= 200 && f.inboxMax <= 5000,
  });
}

/** Counts, throughput, login flood, export and fan-out share one server and one seeded database. */
async function mainServerSections(info) {
  const db = await createDatabase();
  const server = await startServer({
    databaseUrl: db.url,
    withProbe: true,
    logFile: flag('logs') ? join(TMP_DIR, 'server.log') : undefined,
  });
  info.postgres = await withClient(
    db.url,
    async (c) => (await c.query('SHOW server_version')).rows[0].server_version,
  );
  log('seeding');
  const seedStarted = Date.now();
  const data = await withClient(db.url, async (c) => {
    const seeded = await seedMain(c);
    // A database in use has been vacuumed: index-only scans and planner statistics as in steady state.
    await c.query('VACUUM ANALYZE');
    return seeded;
  });
  log(`seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
  const scenarios = throughputScenarios(data);
  if (enabled('counts')) await countsSection(server, data);
  if (enabled('throughput')) {
    // Every PUT of the mix once first: a first submission changes the counts the tagged reads show, a repeat
    // changes nothing they show, so the tags read next stay current through the rounds.
    for (const variant of scenarios.find((s) => s.key === 'put').variants) {
      await expectStatus(200, server.port, variant.path, variant);
    }
    const conditional = await conditionalScenarios(server.port, scenarios, ['task', 'classTasks']);
    await throughputSection(server, [...scenarios, ...conditional]);
  }
  if (enabled('login')) await loginSection(server, data, scenarios);
  if (enabled('export')) await exportSection(server, data);
  // Last: its mails are still being written to the log for a while after the measurement.
  if (enabled('fanout')) await fanoutSection(server, db, data);
  // Requests whose client went away at the end of a load run may still be running: let them finish.
  await sleep(1000);
  await server.stop();
  await db.drop();
}

async function largeExportSection() {
  log(
    `export of ${LARGE_EXPORT_MEMBERS.toLocaleString('en')} members, server under --max-old-space-size=128`,
  );
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, heapMb: 128 });
  const data = await withClient(db.url, async (c) => {
    const seeded = await seedRoster(c, LARGE_EXPORT_MEMBERS);
    await c.query('VACUUM ANALYZE');
    return seeded;
  });
  const r = await timeExport(server, {
    taskId: data.taskId,
    warmUpTaskId: data.warmUpTaskId,
    auth: bearer(data.owner.id),
    members: LARGE_EXPORT_MEMBERS,
  });
  row(`export of ${LARGE_EXPORT_MEMBERS.toLocaleString('en')} members, --max-old-space-size=128`, {
    result:
      `${r.ok ? 'complete' : `INCOMPLETE (status ${r.status})`}: ${r.rows} rows, ${fixed(mb(r.bytes), 1)} MB in ` +
      `${fixed(r.ms / 1000, 1)} s; RSS growth ${fixed(mb(r.rssGrowth), 1)} MB`,
    target: 'completes',
    met: r.ok,
  });
  await server.stop();
  await db.drop();
}

function render(info, floor) {
  const header = [
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'vs /health/live',
    'SQL/req',
    'CPU µs/req node + PG',
    'result',
    'target',
    'met',
  ];
  const cell = (value, digits = 0) => (value === undefined || value === null ? '' : fixed(value, digits));
  const body = rows.map((r) => [
    r.scenario,
    cell(r.rps),
    cell(r.p50, 1),
    cell(r.p99, 1),
    percent(r.ratio),
    typeof r.sql === 'number' ? fixed(r.sql, 1) : (r.sql ?? ''),
    r.cpu ?? '',
    r.result,
    r.target,
    r.met === null ? '' : r.met ? 'yes' : '**NO**',
  ]);
  const parts = [
    `Run ${info.date}, ${info.durationMinutes} min, on ${info.nproc} CPUs (${info.cpu}), Node ${info.node}, ` +
      `PostgreSQL ${info.postgres ?? 'n/a'}; load average before ${info.loadBefore}, after ${info.loadAfter}` +
      `${QUICK ? ' — QUICK MODE, not comparable with a full run' : ''}.`,
    '',
    '```',
    info.memory,
    '```',
    '',
    table(header, body),
  ];
  if (floor)
    parts.push(
      '',
      'Framework floor (`node bench/hello.js`): the same `{"status":"ok"}` endpoint, -c 32, median of 3 rounds.',
      '',
      floor.table,
    );
  return parts.join('\n');
}

/** Replaces the generated part of bench/results.md; the hand-written findings below the marker stay. */
function writeResults(report) {
  const previous = existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : '';
  const findings = previous.includes(FINDINGS_MARKER)
    ? previous.slice(previous.indexOf(FINDINGS_MARKER))
    : `${FINDINGS_MARKER}\n`;
  writeFileSync(
    RESULTS,
    `# Benchmark results\n\nGenerated by \`npm run bench\` (bench/run.js); bench/README.md explains how to read it.\n\n${report}\n\n${findings}`,
  );
  log('wrote bench/results.md');
}

runMain(async () => {
  const started = Date.now();
  buildIfNeeded();
  const info = { ...machine(), loadBefore: loadAverage() };
  let floor = null;
  if (enabled('floor')) {
    log('framework floor: node:http, Express, NestJS and the layers the service adds');
    floor = await measureFloor({ rounds: ROUNDS, duration: QUICK ? 3 : 5, connections: CONNECTIONS, log });
  }
  if (['counts', 'throughput', 'login', 'export', 'fanout'].some(enabled)) await mainServerSections(info);
  if (enabled('large')) await largeExportSection();
  info.loadAfter = loadAverage();
  info.durationMinutes = ((Date.now() - started) / 60_000).toFixed(1);
  const report = render(info, floor);
  console.log(`\n${report}`);
  if (!flag('no-write') && !QUICK && !only) writeResults(report);
  else log('bench/results.md not written (--quick, --only or --no-write)');
});
