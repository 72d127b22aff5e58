#!/usr/bin/env node
/*
 * The benchmark suite (`npm run bench`); see bench/README.md.
 *
 *   node bench/run.js [--quick] [--only=floor,counts,throughput,login,export,fanout,large] [--no-write] [--logs]
 *
 * --quick      one round of 3 s per throughput scenario and fewer publications (for trying changes; the
 *              numbers are not comparable to a full run)
 * --only       run some sections only
 * --no-write   print the table, leave bench/results.md alone
 * --logs       server logs to bench/.tmp/*.log instead of /dev/null
 *
 * Builds dist/ when stale, creates fresh databases on DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres), starts `node dist/main.js` (NODE_ENV=production,
 * LOG_LEVEL=info) with the probe preload (bench/lib/probe-preload.js), seeds with SQL, measures, prints one
 * table and writes it to bench/results.md (the "Findings" part of that file is kept). Everything started is
 * stopped and dropped at the end, also on failure or Ctrl-C.
 */
'use strict';
const { readFileSync, writeFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { request } = require('./lib/http');
const { load } = require('./lib/load');
const { machine, table, fixed, percent } = require('./lib/report');
const { measureFanout, statementsPerRequest, throughputRounds, timeExport } = require('./lib/scenarios');
const { seedMain, seedRoster, PAGE_SIZE } = require('./lib/seed');
const { ROOT, TMP_DIR, buildIfNeeded, sleep, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');
const { measureFloor } = require('./hello');
const { cycle, throughputScenarios } = require('./lib/workloads');

const SECTIONS = ['floor', 'counts', 'throughput', 'login', 'export', 'fanout', 'large'];
const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
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
const LARGE_EXPORT_MEMBERS = 200_000;
const RESULTS = join(ROOT, 'bench', 'results.md');

const log = (message) => console.log(`[bench] ${message}`);
const mb = (bytes) => bytes / 1024 / 1024;

/** Rows of the one results table. */
const rows = [];
function row(scenario, { rps, p50, p99, ratio, sql, result = '', target = '', met = null }) {
  rows.push({ scenario, rps, p50, p99, ratio, sql, result, target, met });
}

async function main() {
  buildIfNeeded();
  const info = machine();
  const notes = [];
  let floor = null;
  if (enabled('floor')) {
    log('framework floor: node:http, Express, NestJS');
    floor = await measureFloor({ rounds: ROUNDS, duration: QUICK ? 3 : 5, connections: CONNECTIONS, log });
  }

  const mainSections = ['counts', 'throughput', 'login', 'export', 'fanout'];
  if (mainSections.some(enabled)) {
    const db = await createDatabase();
    const server = await startServer({
      databaseUrl: db.url,
      withProbe: true,
      logFile: flag('logs') ? join(TMP_DIR, 'server.log') : undefined,
    });
    info.postgres = await withClient(db.url, async (c) => (await c.query('SHOW server_version')).rows[0].server_version);
    log('seeding');
    const seedStarted = Date.now();
    const data = await withClient(db.url, async (c) => {
      const seeded = await seedMain(c);
      await c.query('VACUUM ANALYZE');
      return seeded;
    });
    log(`seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
    const scenarios = throughputScenarios(data);
    const owner = { authorization: bearer(data.owner.id) };
    const member = { authorization: bearer(data.members[0].id) };

    const sql = {};
    if (enabled('counts') || enabled('throughput')) {
      for (const scenario of scenarios) {
        sql[scenario.key] = (await statementsPerRequest(server, scenario.variants)).perRequest;
      }
    }
    if (enabled('counts')) {
      const count = async (path, headers) => (await statementsPerRequest(server, [{ path, headers }])).perRequest;
      const compare = (name, a, b, labels) =>
        row(name, {
          sql: `${fixed(a, 1)} / ${fixed(b, 1)}`,
          result: `${labels[0]}: ${fixed(a, 1)}, ${labels[1]}: ${fixed(b, 1)}`,
          target: 'same statement count',
          met: a === b,
        });
      compare(
        'GET /classes/:classId/tasks, 3 vs 300 tasks',
        await count(`/classes/${data.smallClassId}/tasks`, member),
        await count(`/classes/${data.largeClassId}/tasks`, member),
        ['3 tasks', '300 tasks'],
      );
      compare(
        'GET /tasks/:taskId/submissions, 10 vs 300 members',
        await count(`/tasks/${data.roster10.taskId}/submissions`, owner),
        await count(`/tasks/${data.roster300.taskId}/submissions`, owner),
        ['10 members', '300 members'],
      );
      compare(
        'GET /tasks/:taskId/submissions/export, 10 vs 300 members',
        await count(`/tasks/${data.roster10.taskId}/submissions/export`, owner),
        await count(`/tasks/${data.roster300.taskId}/submissions/export`, owner),
        ['10 members', '300 members'],
      );
    }

    let normal = null;
    if (enabled('throughput')) {
      log(`throughput: ${ROUNDS} round(s) of ${scenarios.length} scenarios, -c ${CONNECTIONS} -d ${DURATION}`);
      for (const scenario of scenarios) await load(server.port, scenario.variants, { connections: 8, duration: 1 });
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
        if (t?.ratio) checks.push(r.ratio >= t.ratio);
        if (t?.p99) checks.push(r.p99 <= t.p99);
        const targetText = t ? [`≥ ${percent(t.ratio)}`, ...(t.p99 ? [`p99 ≤ ${t.p99} ms`] : [])].join(', ') : 'reference';
        let result = `runs: ${r.runs.map((x) => x.rps.toFixed(0)).join(', ')} req/s`;
        let met = t ? checks.every(Boolean) : null;
        if (scenario.key === 'inbox15') {
          const slower = r.p50 / results.inbox1.p50;
          result += `; p50 ${slower.toFixed(2)}× page 1`;
          met = met && slower <= 1.5;
        }
        row(scenario.name, { rps: r.rps, p50: r.p50, p99: r.p99, ratio: r.ratio, sql: sql[scenario.key], result, target: scenario.key === 'inbox15' ? `${targetText}, p50 ≤ 1.5× page 1` : targetText, met });
      }
      normal = results;
    }

    if (enabled('login')) {
      log('login flood: 100 logins/s for 10 s against a steady mix of other requests');
      const others = [...scenarios.find((s) => s.key === 'task').variants, ...scenarios.find((s) => s.key === 'inbox1').variants];
      const steady = { connections: 16, duration: 10, overallRate: 200 };
      await server.probe.resetDelay();
      const before = await load(server.port, others, steady);
      const delayBefore = await server.probe.delay();
      const users = [data.owner, data.admin, ...data.members];
      // Every login from its own client address (X-Forwarded-For is trusted from loopback), so the per-IP
      // limits (50/min per IP, 10/min per IP and e-mail) do not simply reject the flood.
      const logins = cycle(users, 1000, (user, i) => ({
        method: 'POST',
        path: '/auth/login',
        headers: { 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
        body: { email: user.email, password: data.password },
      }));
      await server.probe.resetDelay();
      const [during, flood] = await Promise.all([
        load(server.port, others, steady),
        load(server.port, logins, { connections: 100, duration: 10, overallRate: 100 }),
      ]);
      const delayDuring = await server.probe.delay();
      const ratio = during.p99 / before.p99;
      row('other endpoints during a login flood (100 logins/s, 10 s)', {
        rps: during.rps,
        p50: during.p50,
        p99: during.p99,
        result:
          `steady 200 req/s of GET task + inbox: p99 ${before.p99} → ${during.p99} ms (${ratio.toFixed(2)}×); ` +
          `event-loop delay p99 ${delayBefore.p99} → ${delayDuring.p99} ms; logins: ${flood.rps.toFixed(0)}/s answered 200, ` +
          `p50 ${flood.p50} ms, p99 ${flood.p99} ms, statuses ${JSON.stringify(flood.statusCodes)}, ${flood.timeouts} timeouts`,
        target: 'p99 < 2× normal',
        met: ratio < 2,
      });
    }

    if (enabled('export')) {
      log('export of 10,000 members');
      const runs = [];
      for (let i = 0; i < (QUICK ? 1 : 3); i += 1) {
        runs.push(
          await timeExport(server, {
            taskId: data.big.taskId,
            warmUpTaskId: data.roster10.taskId,
            auth: owner.authorization,
            members: 10_000,
          }),
        );
      }
      const ms = runs.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
      const growth = Math.max(...runs.map((r) => r.rssGrowth));
      row('export of 10,000 members (CSV)', {
        sql: (await statementsPerRequest(server, [{ path: `/tasks/${data.big.taskId}/submissions/export`, headers: owner }], { count: 1 })).perRequest,
        result: `median ${fixed(ms)} ms of ${runs.map((r) => fixed(r.ms)).join(', ')}; ${runs[0].rows} rows, ${fixed(mb(runs[0].bytes), 1)} MB; RSS growth ≤ ${fixed(mb(growth), 1)} MB`,
        target: '≤ 2 s, RSS growth ≤ 50 MB',
        met: runs.every((r) => r.ok) && ms <= 2000 && mb(growth) <= 50,
      });
    }

    if (enabled('fanout')) {
      log(`publication fan-out: ${PUBLISHES} tasks to 10,000 members`);
      const f = await measureFanout(server, db.url, {
        classId: data.big.classId,
        auth: owner.authorization,
        recipients: 10_001,
        publishes: PUBLISHES,
        log,
      });
      row('publish to 10,000 members (POST /classes/:classId/tasks)', {
        p50: f.callP50,
        p99: null,
        result: `call p50 ${fixed(f.callP50)} ms, p95 ${fixed(f.callP95)} ms; all 10,001 inbox rows after p50 ${fixed(f.inboxP50 / 1000, 1)} s, max ${fixed(f.inboxMax / 1000, 1)} s (${PUBLISHES} publications)`,
        target: 'call p95 ≤ 200 ms, inbox ≤ 5 s',
        met: f.callP95 <= 200 && f.inboxMax <= 5000,
      });
    }
    // Requests whose client went away at the end of a load run may still be running: let them finish.
    await sleep(1000);
    await server.stop();
    await db.drop();
  }

  if (enabled('large')) {
    log(`export of ${LARGE_EXPORT_MEMBERS.toLocaleString('en')} members, server under --max-old-space-size=128`);
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
      result: `${r.ok ? 'complete' : `INCOMPLETE (status ${r.status})`}: ${r.rows} rows, ${fixed(mb(r.bytes), 1)} MB in ${fixed(r.ms / 1000, 1)} s; RSS growth ${fixed(mb(r.rssGrowth), 1)} MB`,
      target: 'completes',
      met: r.ok,
    });
    await server.stop();
    await db.drop();
  }

  const report = render(info, floor, notes);
  console.log(`\n${report}`);
  if (!flag('no-write') && !QUICK && !only) writeResults(report);
  else log('bench/results.md not written (--quick, --only or --no-write)');
}

function render(info, floor) {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'vs /health/live', 'SQL/req', 'result', 'target', 'met'];
  const body = rows.map((r) => [
    r.scenario,
    r.rps === undefined ? '' : fixed(r.rps),
    r.p50 === undefined || r.p50 === null ? '' : fixed(r.p50, 1),
    r.p99 === undefined || r.p99 === null ? '' : fixed(r.p99, 1),
    percent(r.ratio),
    typeof r.sql === 'number' ? fixed(r.sql, 1) : (r.sql ?? ''),
    r.result,
    r.target,
    r.met === null ? '' : r.met ? 'yes' : '**NO**',
  ]);
  const parts = [
    `Run ${info.date} on ${info.nproc} CPUs (${info.cpu}), Node ${info.node}, PostgreSQL ${info.postgres ?? 'n/a'}${QUICK ? ' — QUICK MODE, not comparable' : ''}.`,
    '',
    '```',
    info.memory,
    '```',
    '',
    table(header, body),
  ];
  if (floor) parts.push('', 'Framework floor (same machine, same load, JSON `{status:"ok"}`):', '', floor.table);
  return parts.join('\n');
}

/** Replaces the generated part of bench/results.md; the hand-written findings below the marker stay. */
function writeResults(report) {
  const marker = '<!-- findings: kept by bench/run.js -->';
  const previous = existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : '';
  const findings = previous.includes(marker) ? previous.slice(previous.indexOf(marker)) : `${marker}\n`;
  writeFileSync(RESULTS, `# Benchmark results\n\nGenerated by \`npm run bench\` (bench/run.js); see bench/README.md.\n\n${report}\n\n${findings}`);
  log('wrote bench/results.md');
}

runMain(main);
