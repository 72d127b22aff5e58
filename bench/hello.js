#!/usr/bin/env node
/*
 * The framework floor on this machine: the same tiny JSON endpoint served by bare node:http, bare Express,
 * bare NestJS + Express, and NestJS with the layers the service adds (see lib/hello-server.js). Each server
 * runs in its own process; autocannon -c 32 drives GET /hello in `rounds` rounds (every kind once per
 * round); the table shows median req/s, latency, the server's CPU time per request and the share of bare
 * node:http in the same round.
 *
 *   node bench/hello.js [--quick]
 *
 * bench/run.js runs this as its "floor" section.
 */
'use strict';
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { onCleanup, runMain } = require('./lib/cleanup');
const { load, median } = require('./lib/load');
const { table, fixed, percent } = require('./lib/report');
const { ROOT, buildIfNeeded, cpuMsOf, freePort } = require('./lib/server');

const KINDS = ['node', 'express', 'nest', 'nest+helmet', 'nest+pino-http', 'nest+log', 'nest+stack'];

async function startHello(kind) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, 'lib', 'hello-server.js'), kind, String(port)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
  });
  const stop = onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  });
  await new Promise((resolve, reject) => {
    child.stdio[3].once('data', resolve);
    child.once('exit', (code) => reject(new Error(`hello server ${kind} exited with ${code}`)));
  });
  return { port, pid: child.pid, stop };
}

/** Answers { results: {kind: {rps, p50, p99}}, table } with the share of bare node:http. */
async function measureFloor({ rounds = 3, duration = 5, connections = 32, log = () => {} } = {}) {
  const runs = Object.fromEntries(KINDS.map((kind) => [kind, []]));
  for (let round = 1; round <= rounds; round += 1) {
    for (const kind of KINDS) {
      const server = await startHello(kind);
      try {
        await load(server.port, [{ path: '/hello' }], { connections: 8, duration: 1 });
        const cpuBefore = cpuMsOf(server.pid);
        const result = await load(server.port, [{ path: '/hello' }], { connections, duration });
        result.cpuMicros = ((cpuMsOf(server.pid) - cpuBefore) * 1000) / result.total;
        if (result.non2xx || result.errors)
          throw new Error(`${kind}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        runs[kind].push(result);
        log(
          `round ${round} ${kind}: ${result.rps.toFixed(0)} req/s, ${result.cpuMicros.toFixed(0)} µs CPU/req`,
        );
      } finally {
        await server.stop();
      }
    }
  }
  const results = Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      {
        rps: median(runs[kind].map((r) => r.rps)),
        p50: median(runs[kind].map((r) => r.p50)),
        p99: median(runs[kind].map((r) => r.p99)),
        ratio: median(runs[kind].map((r, i) => r.rps / runs.node[i].rps)),
        cpuMicros: median(runs[kind].map((r) => r.cpuMicros)),
      },
    ]),
  );
  return {
    results,
    table: table(
      ['server', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'vs node:http'],
      KINDS.map((kind) => {
        const r = results[kind];
        return [kind, fixed(r.rps), fixed(r.p50, 1), fixed(r.p99, 1), fixed(r.cpuMicros), percent(r.ratio)];
      }),
    ),
  };
}

if (require.main === module) {
  runMain(async () => {
    buildIfNeeded();
    const quick = process.argv.includes('--quick');
    const { table: text } = await measureFloor({
      rounds: quick ? 1 : 3,
      duration: quick ? 3 : 5,
      log: (m) => console.log(`[hello] ${m}`),
    });
    console.log(`\n${text}`);
  });
}

module.exports = { measureFloor };
