#!/usr/bin/env node
/*
 * CPU profile of the server under one throughput scenario of the suite.
 *
 *   node bench/profile.js [scenario] [seconds]     scenario: live, task, classTasks, inbox1, inbox15, put
 *
 * Starts the built server with the probe (bench/lib/probe-preload.js) on a fresh, seeded database, warms
 * the scenario up, then profiles the main thread (V8 CPU profiler through node:inspector, 200 µs sampling)
 * while autocannon -c 32 drives the scenario for `seconds` (default 10), and prints where the time went:
 * self time by package or source file, and the heaviest functions. The .cpuprofile is written to
 * bench/.tmp/ for a flame graph (load it in Chrome DevTools or speedscope).
 */
'use strict';
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { load } = require('./lib/load');
const { table } = require('./lib/report');
const { seedMain } = require('./lib/seed');
const { TMP_DIR, buildIfNeeded, startServer } = require('./lib/server');
const { throughputScenarios } = require('./lib/workloads');

/** Package (node_modules/<name>), service file (dist/…), or Node internal, of a profile node. */
function where(url) {
  if (!url) return '(native / GC / idle)';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1];
  const own = /\/dist\/(.+)$/.exec(url);
  if (own) return `service: ${own[1]}`;
  if (url.startsWith('node:')) return url;
  return url;
}

function summarize(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const intervals = profile.timeDeltas;
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (intervals[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byPlace = new Map();
  const byFunction = new Map();
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id);
    const place = callFrame.functionName === '(idle)' ? '(idle)' : where(callFrame.url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
    const name = `${callFrame.functionName || '(anonymous)'} ${where(callFrame.url)}:${callFrame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  }
  const top = (map, n) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, micros]) => [name, `${((micros / total) * 100).toFixed(1)}%`]);
  return { places: top(byPlace, 25), functions: top(byFunction, 30) };
}

async function main() {
  const [key = 'live', seconds = '10'] = process.argv.slice(2);
  buildIfNeeded();
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, withProbe: true });
  const data = await withClient(db.url, async (c) => {
    const seeded = await seedMain(c);
    await c.query('VACUUM ANALYZE');
    return seeded;
  });
  const scenario = throughputScenarios(data).find((s) => s.key === key);
  if (!scenario) throw new Error(`unknown scenario ${key}`);
  await load(server.port, scenario.variants, { connections: 8, duration: 2 });
  await server.probe.resetDelay();
  await server.probe.startProfile();
  const result = await load(server.port, scenario.variants, { connections: 32, duration: Number(seconds) });
  const profile = await server.probe.stopProfile();
  const delay = await server.probe.delay();
  await server.stop();
  mkdirSync(TMP_DIR, { recursive: true });
  const file = join(TMP_DIR, `${key}-${Date.now()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  const { places, functions } = summarize(profile);
  console.log(`${scenario.name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
  console.log(`event-loop delay: p50 ${delay.p50} ms, p99 ${delay.p99} ms, max ${delay.max} ms`);
  console.log(`profile: ${file}\n`);
  console.log(table(['self time by place', 'share'], places));
  console.log();
  console.log(table(['heaviest functions (self time)', 'share'], functions));
}

runMain(main);
