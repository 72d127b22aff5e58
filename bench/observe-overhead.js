#!/usr/bin/env node
/*
 * What each observability setup costs the server, measured side by side (issue 36):
 *   none     neither: no METRICS_PORT, no OTEL_EXPORTER_OTLP_ENDPOINT (the default);
 *   ours     prom-client and the OpenTelemetry SDK: METRICS_PORT=0 and OTEL_EXPORTER_OTLP_ENDPOINT at a local
 *            sink (every request timed, process collectors on, every trace exported; nothing scrapes);
 *   observe  @nestjs/observe 0.3.3 at its defaults, OBSERVE_ENDPOINT at the same sink, ours off.
 *
 *   node bench/observe-overhead.js [rounds] [seconds] [starts]     default 5 rounds of 4 s, 3 starts each
 *
 * The service does not depend on @nestjs/observe: when it is not installed, this script installs it with
 * `npm install --no-save @nestjs/observe@0.3.3` (package.json and the lockfile unchanged; the next `npm ci`
 * removes it). It runs from a variant of the build: dist/ copied to bench/.tmp/dist-observe/, whose
 * bootstrap.js gets the two additions of the SDK's quick start (bench/lib/observe-setup.js) in its
 * NestFactory.create call; nothing in src/ or dist/ changes.
 *
 * The sink answers every POST 200 `{}`, as a collector that accepts everything, and keeps what it received.
 * Three servers run at once, each on its own seeded database; each round loads every scenario on each server,
 * the order rotated every round, so the machine's drift falls on all three alike. Then, with the three idle,
 * the CPU they use in IDLE_SECONDS; then each setup is started `starts` times more (interleaved) on its
 * migrated database: the wall time until GET /health answers, the CPU used by then and the RSS.
 *
 * Prints per scenario the medians of the server's CPU per request (node and PostgreSQL), req/s, and the
 * medians of the per-round ratios to `none` with their range; the bytes each exporter sent per request; what
 * each export contained (span names, routes); the idle CPU; the start costs.
 */
'use strict';
const { execFileSync } = require('node:child_process');
const { cpSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const { join } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { onCleanup, runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { expectStatus } = require('./lib/http');
const { load, median } = require('./lib/load');
const { loadAverage, table } = require('./lib/report');
const { seedMain } = require('./lib/seed');
const { ROOT, TMP_DIR, buildIfNeeded, cpuMsOf, rssOf, sleep, startServer } = require('./lib/server');
const { throughputScenarios } = require('./lib/workloads');

const ROUNDS = Number(process.argv[2] ?? 5);
const SECONDS = Number(process.argv[3] ?? 4);
const STARTS = Number(process.argv[4] ?? 3);
const CONNECTIONS = 32;
const IDLE_SECONDS = 20;
const SCENARIOS = ['live', 'task', 'put'];
const OBSERVE_VERSION = '0.3.3';
/** The SDK's spans of queries and outbound calls, by the driver they name as their class. */
const OUTGOING_SPANS = ['pg', 'http', 'mysql2', 'mongodb'];
const log = (message) => console.error(`[observe] ${message}`);

function installObserveIfMissing() {
  try {
    require.resolve('@nestjs/observe');
    return;
  } catch {
    log(`installing @nestjs/observe@${OBSERVE_VERSION} (--no-save)`);
  }
  execFileSync(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', `@nestjs/observe@${OBSERVE_VERSION}`],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/** dist/ copied to bench/.tmp/dist-observe/ with the SDK's module and instrument in NestFactory.create. */
function buildObserveVariant() {
  const target = join(TMP_DIR, 'dist-observe');
  rmSync(target, { recursive: true, force: true });
  cpSync(join(ROOT, 'dist'), target, { recursive: true });
  onCleanup(() => rmSync(target, { recursive: true, force: true }));
  const file = join(target, 'bootstrap.js');
  const source = readFileSync(file, 'utf8');
  const call = /NestFactory\.create\(module, (new [\w.]+\(\)), \{/g;
  if ((source.match(call) ?? []).length !== 1)
    throw new Error('dist/bootstrap.js: the NestFactory.create(module, adapter, { call was not found once');
  const setup = `require(${JSON.stringify(join(__dirname, 'lib', 'observe-setup.js'))})`;
  writeFileSync(
    file,
    source.replace(
      call,
      `NestFactory.create(${setup}.withObserve(module), $1, { instrument: ${setup}.ObserveInstrument,`,
    ),
  );
  return join(target, 'main.js');
}

/** An HTTP server that answers every request 200 `{}` and keeps the bodies, by path. */
async function startSink() {
  const received = new Map();
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const entry = received.get(request.url) ?? { posts: 0, bytes: 0, bodies: [], gzip: false };
      entry.posts += 1;
      entry.bytes += body.length;
      entry.bodies.push(body);
      entry.gzip ||= request.headers['content-encoding'] === 'gzip';
      received.set(request.url, entry);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}`, received };
}

/** A seeded database and the server of `setup` on it, with the scenarios' requests ready. */
async function startSetup(setup) {
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, env: setup.env, main: setup.main });
  const data = await withClient(db.url, async (client) => {
    const seeded = await seedMain(client);
    await client.query('VACUUM ANALYZE');
    return seeded;
  });
  const scenarios = throughputScenarios(data).filter((s) => SCENARIOS.includes(s.key));
  // A first submission changes what the reads show; the rounds then repeat the same write.
  for (const variant of scenarios.find((s) => s.key === 'put').variants)
    await expectStatus(200, server.port, variant.path, variant);
  let served = 0;
  for (const scenario of scenarios)
    served += (await load(server.port, scenario.variants, { connections: 8, duration: 1 })).total;
  log(`${setup.label} on port ${server.port}`);
  return { ...setup, db, server, scenarios, served };
}

async function measure(running, key) {
  const scenario = running.scenarios.find((s) => s.key === key);
  const took = running.server.cpu();
  const result = await load(running.server.port, scenario.variants, {
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  const cpu = took();
  running.served += result.total;
  if (result.non2xx || result.errors || result.timeouts)
    throw new Error(`${running.label} ${scenario.name}: ${JSON.stringify(result.statusCodes)}`);
  return { rps: result.rps, node: (cpu.node * 1000) / result.total, pg: (cpu.pg * 1000) / result.total };
}

const range = (values) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

/**
 * What each exporter sent: spans per request and the most frequent span names; for the SDK also the
 * operations it reported and a statement as it sent it.
 */
function describeExports(received) {
  const otlp = { names: new Map(), spans: 0, server: 0 };
  const observe = { operations: new Map(), names: new Map(), jobs: new Set(), runtime: 0, statement: '' };
  for (const [path, entry] of received) {
    for (const body of entry.bodies) {
      if (path === '/v1/traces') {
        for (const resource of JSON.parse(body.toString('utf8')).resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? [])
            for (const span of scope.spans ?? []) {
              otlp.spans += 1;
              if (span.kind === 2) otlp.server += 1; // SPAN_KIND_SERVER: one per request
              otlp.names.set(span.name, (otlp.names.get(span.name) ?? 0) + 1);
            }
      } else if (path === '/applications/telemetry') {
        const batch = JSON.parse(gunzipSync(body).toString('utf8'));
        observe.runtime += batch.runtime ? 1 : 0;
        for (const job of batch.jobs ?? []) observe.jobs.add(job.n);
        for (const snapshot of batch.snapshots ?? []) {
          const key = `${snapshot.a?.m ?? ''} ${snapshot.op ?? snapshot.a?.ou ?? '?'} ${snapshot.a?.sc ?? ''}`;
          const operation = observe.operations.get(key) ?? { count: 0, methods: 0, outgoing: 0 };
          operation.count += 1;
          const walk = (nodes) => {
            for (const node of nodes ?? []) {
              // A class and method: a metered event of the platform; a query or an outbound call (named by
              // its driver: pg, http, …): not.
              if (OUTGOING_SPANS.includes(node.c)) operation.outgoing += 1;
              else operation.methods += 1;
              const name = node.c ? `${node.c}.${node.m}` : `${node.o}: ${node.n}`;
              observe.names.set(name, (observe.names.get(name) ?? 0) + 1);
              const statement = node.t?.['db.statement'] ?? '';
              if (statement.length > observe.statement.length && statement.length < 300)
                observe.statement = statement;
              walk(node.ch);
            }
          };
          walk(snapshot.t);
          observe.operations.set(key, operation);
        }
      }
    }
  }
  const top = (map, n) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, count]) => `${name} ×${count}`)
      .join('; ');
  const operations = [...observe.operations]
    .sort((a, b) => b[1].count - a[1].count)
    .map(
      ([key, { count, methods, outgoing }]) =>
        `${key} ×${count} (per request ${(methods / count).toFixed(1)} method spans, ${(outgoing / count).toFixed(1)} query/HTTP spans)`,
    );
  return [
    `OTLP: ${otlp.server} requests, ${(otlp.spans / Math.max(otlp.server, 1)).toFixed(1)} spans per request (jobs' included); ${otlp.names.size} span names, the most frequent: ${top(otlp.names, 10)}`,
    `observe: ${operations.join('; ')}`,
    `observe: ${observe.names.size} span names, the most frequent: ${top(observe.names, 14)}`,
    `observe: jobs ${[...observe.jobs].join(', ') || 'none'}; batches with runtime metrics: ${observe.runtime}`,
    `observe: the longest statement as sent: ${observe.statement}`,
  ].join('\n');
}

async function main() {
  buildIfNeeded();
  installObserveIfMissing();
  const sink = await startSink();
  const setups = [
    { label: 'none', env: {} },
    { label: 'ours', env: { METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } },
    { label: 'observe', env: { OBSERVE_ENDPOINT: sink.url }, main: buildObserveVariant() },
  ];
  log(`load ${loadAverage()}`);
  const running = [];
  for (const setup of setups) running.push(await startSetup(setup));
  const runs = Object.fromEntries(
    SCENARIOS.map((key) => [key, Object.fromEntries(setups.map((s) => [s.label, []]))]),
  );
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const key of SCENARIOS) {
      const order = running.map((_, i) => running[(i + round) % running.length]);
      for (const setup of order) runs[key][setup.label].push(await measure(setup, key));
    }
    log(`round ${round} of ${ROUNDS} done, load ${loadAverage()}`);
  }
  // The exporters send every 5 s: the last batches.
  await sleep(6000);
  const idleBefore = running.map((setup) => cpuMsOf(setup.server.pid));
  await sleep(IDLE_SECONDS * 1000);
  const idle = running.map((setup, i) => (cpuMsOf(setup.server.pid) - idleBefore[i]) / IDLE_SECONDS);
  const rss = running.map((setup) => rssOf(setup.server.pid));
  for (const setup of running) await setup.server.stop();

  const starts = Object.fromEntries(setups.map((s) => [s.label, []]));
  for (let round = 0; round < STARTS; round += 1) {
    for (const setup of running.map((_, i) => running[(i + round) % running.length])) {
      const began = performance.now();
      const server = await startServer({ databaseUrl: setup.db.url, env: setup.env, main: setup.main });
      const wall = performance.now() - began;
      starts[setup.label].push({ wall, cpu: cpuMsOf(server.pid), rss: rssOf(server.pid) });
      await server.stop();
    }
  }

  const rows = SCENARIOS.flatMap((key) =>
    running.map((setup) => {
      const mine = runs[key][setup.label];
      const base = runs[key].none;
      const ratios = mine.map((run, i) => run.node / base[i].node);
      return [
        running[0].scenarios.find((s) => s.key === key).name,
        setup.label,
        `${median(mine.map((r) => r.node)).toFixed(0)} + ${median(mine.map((r) => r.pg)).toFixed(0)}`,
        setup.label === 'none' ? '' : `${median(ratios).toFixed(2)} (${range(ratios)})`,
        median(mine.map((r) => r.rps)).toFixed(0),
      ];
    }),
  );
  console.log(table(['scenario', 'setup', 'CPU µs/req (node + PG)', 'node CPU / none', 'req/s'], rows));
  const exporters = { ours: '/v1/traces', observe: '/applications/telemetry' };
  console.log(
    table(
      [
        'setup',
        'requests served',
        'export posts',
        'bytes received',
        'bytes / request served',
        'idle CPU ms/s',
        'RSS after load',
      ],
      running.map((setup, i) => {
        const entry = sink.received.get(exporters[setup.label]);
        return [
          setup.label,
          String(setup.served),
          entry ? String(entry.posts) : '',
          entry ? `${entry.bytes}${entry.gzip ? ' (gzip)' : ''}` : '',
          entry ? (entry.bytes / setup.served).toFixed(0) : '',
          idle[i].toFixed(1),
          `${(rss[i] / 2 ** 20).toFixed(0)} MiB`,
        ];
      }),
    ),
  );
  console.log(
    table(
      ['setup', 'start to healthy (ms, median)', 'CPU by then (ms, median)', 'RSS by then'],
      setups.map(({ label }) => [
        label,
        `${median(starts[label].map((s) => s.wall)).toFixed(0)} (${starts[label].map((s) => s.wall.toFixed(0)).join(', ')})`,
        `${median(starts[label].map((s) => s.cpu)).toFixed(0)} (${starts[label].map((s) => s.cpu).join(', ')})`,
        `${(median(starts[label].map((s) => s.rss)) / 2 ** 20).toFixed(0)} MiB`,
      ]),
    ),
  );
  console.log(describeExports(sink.received));
  for (const setup of running) await setup.db.drop();
}

runMain(main);
