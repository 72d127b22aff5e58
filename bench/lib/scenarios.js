'use strict';
/*
 * The measurements of the suite, each usable on its own (bench/export.js and bench/fanout.js run one of
 * them). Every function answers plain numbers; bench/run.js turns them into the results table.
 */
const { withClient } = require('./db');
const { expectStatus, request } = require('./http');
const { load, median, percentile } = require('./load');
const { rssOf, sleep } = require('./server');

const RSS_SAMPLE_MS = 10;

/**
 * A download timed to its last byte while the server's VmRSS is sampled: the response ({ status, ms, lines,
 * bytes }) with rssBaseline, rssPeak and rssGrowth. A warm-up download of `warmUpPath` runs first so lazy
 * initialisation is not counted.
 */
async function timeDownload(server, { warmUpPath, path, auth }) {
  await expectStatus(200, server.port, warmUpPath, { auth });
  await sleep(300);
  const baseline = rssOf(server.pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(server.pid) ?? 0);
  }, RSS_SAMPLE_MS);
  let result;
  try {
    result = await request(server.port, path, { auth });
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssOf(server.pid) ?? 0);
  return { ...result, rssBaseline: baseline, rssPeak: peak, rssGrowth: peak - baseline };
}

/**
 * One CSV export timed to its last byte while the server's VmRSS is sampled: { ms, rows, bytes, rssGrowth,
 * rssPeak }. A warm-up export of `warmUpTaskId` runs first so lazy initialisation is not counted.
 */
async function timeExport(server, { taskId, warmUpTaskId, auth, members }) {
  const result = await timeDownload(server, {
    warmUpPath: `/tasks/${warmUpTaskId}/submissions/export`,
    path: `/tasks/${taskId}/submissions/export`,
    auth,
  });
  // Header line plus one line per member of the class, its owner included.
  const complete = result.status === 200 && result.lines === members + 2;
  return {
    ok: complete,
    status: result.status,
    ms: result.ms,
    rows: Math.max(0, result.lines - 1),
    bytes: result.bytes,
    rssBaseline: result.rssBaseline,
    rssPeak: result.rssPeak,
    rssGrowth: result.rssGrowth,
  };
}

/**
 * Publishes `publishes` tasks (POST /classes/:classId/tasks, published at once) in a class of `recipients`
 * members (owner included) and waits after each until every inbox row is SENT. Answers the call latencies
 * and the times until the inbox was complete, in ms.
 */
async function measureFanout(server, databaseUrl, { classId, auth, recipients, publishes, log = () => {} }) {
  return withClient(databaseUrl, async (db) => {
    const calls = [];
    const inbox = [];
    for (let i = 1; i <= publishes; i += 1) {
      const started = performance.now();
      const created = await request(server.port, `/classes/${classId}/tasks`, {
        method: 'POST',
        auth,
        json: true,
        body: { title: `Bench task ${i}`, dueAt: new Date(Date.now() + 7 * 86400_000).toISOString() },
      });
      const callMs = performance.now() - started;
      if (created.status !== 201) throw new Error(`publish answered ${created.status}`);
      for (;;) {
        const {
          rows: [{ n }],
        } = await db.query(
          `SELECT count(*)::int AS n FROM notifications WHERE task_id = $1 AND status = 'SENT'`,
          [created.body.id],
        );
        if (n >= recipients) break;
        if (performance.now() - started > 60_000)
          throw new Error(`only ${n} of ${recipients} inbox rows after 60 s`);
        await sleep(20);
      }
      const inboxMs = performance.now() - started;
      calls.push(callMs);
      inbox.push(inboxMs);
      log(
        `publish ${i}: call ${callMs.toFixed(0)} ms, ${recipients} inbox rows after ${inboxMs.toFixed(0)} ms`,
      );
    }
    return {
      callP50: percentile(calls, 50),
      callP95: percentile(calls, 95),
      callMax: Math.max(...calls),
      inboxP50: percentile(inbox, 50),
      inboxP95: percentile(inbox, 95),
      inboxMax: Math.max(...inbox),
    };
  });
}

/**
 * SQL statements per request of `variants` (the first `count`, one after another), counted by the probe
 * in the server, in steady state: with `warm`, the same requests run once uncounted first, so that each
 * user's token is in the server's token-user cache (a user's first request after a change reads the user:
 * one statement more). Fails when a request does not answer `expected`.
 */
async function statementsPerRequest(server, variants, { count = 10, expected = 200, warm = true } = {}) {
  const chosen = Array.from({ length: count }, (_, i) => variants[i % variants.length]);
  const send = async () => {
    for (const variant of chosen) {
      await expectStatus(expected, server.port, variant.path, {
        method: variant.method,
        body: variant.body,
        headers: variant.headers,
      });
    }
  };
  if (warm) await send();
  return server.probe.countStatements(send);
}

/**
 * Throughput scenarios in `rounds` rounds; in each round every scenario runs once (so drift of a noisy
 * machine spreads over all of them). Answers per scenario key the runs and their medians; the ratio is the
 * median of each round's ratio to the reference scenario of that round.
 */
async function throughputRounds(
  server,
  scenarios,
  { rounds, duration, connections, referenceKey, log = () => {} },
) {
  const runs = Object.fromEntries(scenarios.map((s) => [s.key, []]));
  for (let round = 1; round <= rounds; round += 1) {
    for (const scenario of scenarios) {
      const took = server.cpu();
      const result = await load(server.port, scenario.variants, { connections, duration });
      const cpu = took();
      result.cpuNode = (cpu.node * 1000) / result.total;
      result.cpuPg = (cpu.pg * 1000) / result.total;
      if (result.non2xx || result.errors || result.timeouts) {
        throw new Error(
          `${scenario.name}: ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodes)}), ${result.errors} errors, ${result.timeouts} timeouts`,
        );
      }
      runs[scenario.key].push(result);
      log(
        `round ${round} ${scenario.name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
          `CPU/req node ${result.cpuNode.toFixed(0)} µs + PostgreSQL ${result.cpuPg.toFixed(0)} µs`,
      );
    }
  }
  const reference = runs[referenceKey];
  return Object.fromEntries(
    scenarios.map((s) => {
      const list = runs[s.key];
      return [
        s.key,
        {
          runs: list,
          rps: median(list.map((r) => r.rps)),
          p50: median(list.map((r) => r.p50)),
          p99: median(list.map((r) => r.p99)),
          ratio: median(list.map((r, i) => r.rps / reference[i].rps)),
          cpuNode: median(list.map((r) => r.cpuNode)),
          cpuPg: median(list.map((r) => r.cpuPg)),
        },
      ];
    }),
  );
}

/**
 * Other requests at a steady `rate` (autocannon overallRate, latencies corrected for coordinated omission)
 * for `duration` s, then the same again while `logins` are sent at `floodRate`; `rounds` pairs. Answers
 * per pair the steady load's results before and during, the event-loop delay of both, and the flood's.
 */
async function loginFlood(
  server,
  { others, logins, rate = 100, floodRate = 100, duration = 10, rounds = 1, log = () => {} },
) {
  const steady = { connections: 10, duration, overallRate: rate };
  const pairs = [];
  for (let round = 1; round <= rounds; round += 1) {
    await server.probe.resetDelay();
    const before = await load(server.port, others, steady);
    const delayBefore = await server.probe.delay();
    await server.probe.resetDelay();
    const [during, flood] = await Promise.all([
      load(server.port, others, steady),
      load(server.port, logins, { connections: 100, duration, overallRate: floodRate }),
    ]);
    const delayDuring = await server.probe.delay();
    pairs.push({ before, during, flood, delayBefore, delayDuring, ratio: during.p99 / before.p99 });
    log(
      `login flood ${round}: others p99 ${before.p99} → ${during.p99} ms, ${during.rps.toFixed(0)}/s; ` +
        `event-loop delay p99 ${delayBefore.p99} → ${delayDuring.p99} ms; logins ${flood.rps.toFixed(0)}/s ` +
        `${JSON.stringify(flood.statusCodes)}, ${flood.timeouts} timeouts`,
    );
    // Logins still queued when the flood's clients gave up finish before the next pair starts.
    await sleep(3000);
  }
  return pairs;
}

module.exports = {
  timeDownload,
  timeExport,
  measureFanout,
  statementsPerRequest,
  throughputRounds,
  loginFlood,
};
