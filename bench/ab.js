#!/usr/bin/env node
/*
 * This checkout against another one, interleaved: the throughput scenarios of the suite on two servers at once.
 *
 *   node bench/ab.js <other checkout> [rounds] [seconds]      default 6 rounds of 5 s per scenario and server
 *
 * `<other checkout>` is a second work tree of this repository (e.g. `git worktree add ../base <commit>`), with
 * `npm ci` done, `dist/` built and this bench/ directory copied into it. Each server runs from its own tree on
 * its own freshly seeded database; both run throughout, and each round loads every scenario on one server and
 * then on the other, the order swapped every round. A drift of the machine (other work, CPU frequency) then
 * falls on both alike, which back-to-back runs of `npm run bench` cannot promise on a shared machine.
 *
 * `BENCH_AB_ENV_THIS` and `BENCH_AB_ENV_OTHER` (`NAME=value,NAME=value`) add variables to one server each: with
 * `.` as the other checkout, the same code with a setting on and off, e.g. `BENCH_AB_ENV_OTHER=METRICS_PORT=0`
 * (metrics on in "other").
 *
 * Prints, per scenario, the medians of the server's CPU time per request (node and PostgreSQL) and of req/s for
 * each checkout, and the median of the per-round ratios (other / this), with their range.
 */
'use strict';
const { join, resolve } = require('node:path');
const { cleanUp, onCleanup, runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { load, median } = require('./lib/load');
const { table } = require('./lib/report');
const { seedMain } = require('./lib/seed');
const { ROOT, buildIfNeeded } = require('./lib/server');
const { expectStatus } = require('./lib/http');
const { JWT_SECRET } = require('./lib/tokens');
const { conditionalScenarios, throughputScenarios } = require('./lib/workloads');

const [otherArg, roundsArg, secondsArg] = process.argv.slice(2);
if (!otherArg) {
  console.error('usage: node bench/ab.js <other checkout> [rounds] [seconds]');
  process.exit(2);
}
const ROUNDS = Number(roundsArg ?? 6);
const SECONDS = Number(secondsArg ?? 5);
const CONNECTIONS = 32;
const log = (message) => console.error(`[ab] ${message}`);

/** `NAME=value,NAME=value` as an object of variables. */
const envOf = (list) =>
  Object.fromEntries(
    (list ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

/** A seeded database and a server started from the checkout at `root` (its own bench/lib/server.js). */
async function startCheckout(root, label, env) {
  // The other checkout's copy of server.js starts `node dist/main.js` of that checkout; what it starts is
  // registered with that copy's cleanup.js, which this process's clean-up runs too.
  const { startServer } = require(join(root, 'bench', 'lib', 'server.js'));
  const cleanup = require(join(root, 'bench', 'lib', 'cleanup.js'));
  if (cleanup.cleanUp !== cleanUp) onCleanup(() => cleanup.cleanUp());
  const db = await createDatabase();
  // The server migrates its database at start; the seed fills the migrated tables.
  // This process signs the requests' tokens: both servers take its secret.
  const server = await startServer({ databaseUrl: db.url, env: { JWT_SECRET, ...env } });
  const data = await withClient(db.url, async (client) => {
    const seeded = await seedMain(client);
    await client.query('VACUUM ANALYZE');
    return seeded;
  });
  const scenarios = throughputScenarios(data);
  // A first submission changes what the reads show; the rounds then repeat the same write.
  for (const variant of scenarios.find((s) => s.key === 'put').variants)
    await expectStatus(200, server.port, variant.path, variant);
  // Answers served from elsewhere than the handler: a 304 (ETag) and an Idempotency-Key replay, each key
  // carried out once here and replayed by every request of the rounds.
  scenarios.push(...(await conditionalScenarios(server.port, scenarios, ['task'])));
  const put = scenarios.find((s) => s.key === 'put');
  const replay = {
    key: 'replay',
    name: 'PUT /tasks/:taskId/submissions/me replayed (Idempotency-Key)',
    variants: put.variants.slice(0, 40).map((variant, i) => ({
      ...variant,
      headers: { ...variant.headers, 'idempotency-key': `bench-replay-${i}` },
    })),
  };
  for (const variant of replay.variants) await expectStatus(200, server.port, variant.path, variant);
  scenarios.push(replay);
  for (const scenario of scenarios)
    await load(server.port, scenario.variants, { connections: 8, duration: 1 });
  log(`${label}: ${root} on port ${server.port} ${JSON.stringify(env)}`);
  return { label, server, scenarios, db };
}

async function measure(checkout, key) {
  const scenario = checkout.scenarios.find((s) => s.key === key);
  const took = checkout.server.cpu();
  const result = await load(checkout.server.port, scenario.variants, {
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  const cpu = took();
  if (result.non2xx || result.errors || result.timeouts)
    throw new Error(`${checkout.label} ${scenario.name}: ${JSON.stringify(result.statusCodes)}`);
  return { rps: result.rps, node: (cpu.node * 1000) / result.total, pg: (cpu.pg * 1000) / result.total };
}

const range = (values) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

async function main() {
  buildIfNeeded();
  const here = await startCheckout(ROOT, 'this', envOf(process.env.BENCH_AB_ENV_THIS));
  const other = await startCheckout(resolve(otherArg), 'other', envOf(process.env.BENCH_AB_ENV_OTHER));
  const keys = here.scenarios.map((s) => s.key);
  const runs = Object.fromEntries(keys.map((key) => [key, { this: [], other: [] }]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const key of keys) {
      const order = round % 2 ? [here, other] : [other, here];
      for (const checkout of order) runs[key][checkout.label].push(await measure(checkout, key));
    }
    log(`round ${round} of ${ROUNDS} done`);
  }
  const rows = keys.map((key) => {
    const { this: a, other: b } = runs[key];
    const nodeRatios = a.map((run, i) => b[i].node / run.node);
    const rpsRatios = a.map((run, i) => b[i].rps / run.rps);
    return [
      here.scenarios.find((s) => s.key === key).name,
      `${median(a.map((r) => r.node)).toFixed(0)} + ${median(a.map((r) => r.pg)).toFixed(0)}`,
      `${median(b.map((r) => r.node)).toFixed(0)} + ${median(b.map((r) => r.pg)).toFixed(0)}`,
      `${median(nodeRatios).toFixed(2)} (${range(nodeRatios)})`,
      `${median(a.map((r) => r.rps)).toFixed(0)} / ${median(b.map((r) => r.rps)).toFixed(0)}`,
      `${median(rpsRatios).toFixed(2)} (${range(rpsRatios)})`,
    ];
  });
  console.log(
    table(
      [
        'scenario',
        'CPU µs/req this (node + PG)',
        'other',
        'node CPU other/this',
        'req/s this / other',
        'req/s other/this',
      ],
      rows,
    ),
  );
  for (const checkout of [here, other]) {
    await checkout.server.stop();
    await checkout.db.drop();
  }
}

runMain(main);
