#!/usr/bin/env node
/*
 * Four instances behind one PgBouncer (transaction mode, 10 server connections) against the same four
 * instances connected directly, under one mixed load: task, class and inbox reads, submissions, uploads,
 * logins and publications (each publication fans out TASK_PUBLISHED notifications through the scheduler, which
 * runs every second on every instance). Reports throughput and p99 of both, the errors, lost or duplicated
 * notifications, and the most server connections the database saw.
 *
 *   node bench/pooler.js [--logs]      # --logs: the servers' logs in bench/.tmp/pooler-<setup>-<n>.log
 *
 * Environment: DATABASE_URL (admin connection to a PostgreSQL server; a fresh database is created and
 * dropped), DURATION (seconds of load per setup, default 20), RATE (requests per second per instance, default
 * 5; 0 = as fast as they answer), PGBOUNCER (default /usr/sbin/pgbouncer).
 */
'use strict';
const { onCleanup, runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { load } = require('./lib/load');
const { startPgBouncer } = require('./lib/pgbouncer');
const { cycle } = require('./lib/workloads');
const { seedMain } = require('./lib/seed');
const { join } = require('node:path');
const { buildIfNeeded, sleep, startServer, TMP_DIR } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const INSTANCES = 4;
const SERVER_CONNECTIONS = 10;
const DURATION = Number(process.env.DURATION || 20);
/** autocannon connections per instance. */
const CONNECTIONS = 8;
/**
 * Requests per second offered to each instance (RATE; 0: as fast as they answer). A fixed rate compares the
 * two setups at the same work on a shared machine, where a saturating load mostly measures the neighbours.
 */
const RATE = Number(process.env.RATE ?? 5);
const BOUNDARY = '----ctspoolerbench';
/** Every second on every instance: publications are announced while the load runs. */
const SERVER_ENV = {
  SCHEDULER_CRON: '*/1 * * * * *',
  DELIVERY_POLL_INTERVAL_MS: '200',
  LOGIN_LIMIT_PER_IP: '100000',
};

const log = (message) => console.log(`[pooler] ${message}`);

/**
 * One mix of 200 requests, interleaved and taken in turn; `tag` marks the tasks this setup publishes. The
 * publications come early and evenly (every 50th request from the 10th), so a short run makes some.
 */
function mixedLoad(data, tag) {
  const { publications, others } = requestMix(data, tag);
  // 73 and 196 are coprime: position i*73 mod 196 visits every slot once, spreading each kind over the mix.
  const mix = others
    .map((variant, i) => ({ variant, slot: (i * 73) % others.length }))
    .sort((a, b) => a.slot - b.slot)
    .map(({ variant }) => variant);
  publications.forEach((publication, i) => mix.splice(10 + i * 50, 0, publication));
  return mix;
}

function requestMix(data, tag) {
  const auth = (user) => ({ authorization: bearer(user.id) });
  const { members, taskIds, writableTaskIds } = data;
  const upload = (i) =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="answer-${i}.txt"\r\n` +
    `Content-Type: text/plain\r\n\r\n${'an answer line\n'.repeat(200)}\r\n--${BOUNDARY}--\r\n`;
  const others = [
    ...cycle(members, 78, (user, i) => ({
      path: `/tasks/${taskIds[(i * 7) % taskIds.length]}`,
      headers: auth(user),
    })),
    ...cycle(members, 30, (user) => ({ path: `/classes/${data.classId}/tasks`, headers: auth(user) })),
    ...cycle(members, 30, (user) => ({ path: '/users/me/notifications', headers: auth(user) })),
    ...cycle(members, 30, (user, i) => ({
      method: 'PUT',
      path: `/tasks/${writableTaskIds[(i * 5) % writableTaskIds.length]}/submissions/me`,
      headers: auth(user),
      body: { content: `Answer ${i}` },
    })),
    ...cycle(members, 14, (user, i) => ({
      method: 'POST',
      path: `/tasks/${writableTaskIds[(i * 3) % writableTaskIds.length]}/submissions/me/attachments`,
      headers: { ...auth(user), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      raw: upload(i),
    })),
    // Each login from its own address: the per-address limits are not what is measured.
    ...cycle(members, 14, (user, i) => ({
      method: 'POST',
      path: '/auth/login',
      headers: { 'x-forwarded-for': `10.${tag.length}.${(i >> 8) & 255}.${i & 255}` },
      body: { email: user.email, password: data.password },
    })),
  ];
  const publications = cycle([data.owner, data.admin], 4, (user) => ({
    method: 'POST',
    path: `/classes/${data.classId}/tasks`,
    headers: auth(user),
    body: { title: `${tag} publication`, dueAt: new Date(Date.now() + 7 * 86400_000).toISOString() },
  }));
  return { publications, others };
}

/** TASK_PUBLISHED rows per task published by this setup, once the scheduler announced them all. */
async function notificationCheck(url, classId, tag) {
  return withClient(url, async (client) => {
    const {
      rows: [{ recipients }],
    } = await client.query(
      `SELECT count(*)::int AS recipients FROM class_members m JOIN users u ON u.id = m.user_id AND u.is_active
        WHERE m.class_id = $1`,
      [classId],
    );
    const count = async () =>
      (
        await client.query(
          `SELECT t.id, count(n.id)::int AS rows, count(DISTINCT n.user_id)::int AS users
             FROM tasks t LEFT JOIN notifications n ON n.task_id = t.id AND n.type = 'TASK_PUBLISHED'
            WHERE t.class_id = $1 AND t.title = $2 GROUP BY t.id`,
          [classId, `${tag} publication`],
        )
      ).rows;
    let tasks = await count();
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; tasks = await count()) {
      if (tasks.every((task) => task.users >= recipients)) break;
      await sleep(500);
    }
    return {
      published: tasks.length,
      lost: tasks.reduce((sum, task) => sum + Math.max(0, recipients - task.users), 0),
      duplicated: tasks.reduce((sum, task) => sum + (task.rows - task.users), 0),
    };
  });
}

/** Runs the mixed load on every server at once; sums throughput, takes the worst p99. */
async function loadAll(servers, data, tag) {
  const variants = mixedLoad(data, tag);
  const results = await Promise.all(
    servers.map((server) =>
      load(server.port, variants, {
        connections: CONNECTIONS,
        duration: DURATION,
        ...(RATE ? { overallRate: RATE } : {}),
      }),
    ),
  );
  return {
    rps: results.reduce((sum, r) => sum + r.rps, 0),
    p99: Math.max(...results.map((r) => r.p99)),
    requests: results.reduce((sum, r) => sum + r.total, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    // No answer within autocannon's 10 s, or a connection error: a saturated machine, not a refusal.
    timeouts: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    statusCodes: results.map((r) => r.statusCodes),
  };
}

async function setup(name, db, data, env) {
  log(`${name}: starting ${INSTANCES} instances`);
  // Together, as an autoscaled group starts; a busy shared machine may take minutes for four.
  const servers = await Promise.all(
    Array.from({ length: INSTANCES }, (_, i) =>
      startServer({
        databaseUrl: env.DATABASE_URL,
        env,
        logFile: process.argv.includes('--logs') ? join(TMP_DIR, `pooler-${name}-${i}.log`) : undefined,
        startTimeoutMs: 300_000,
      }),
    ),
  );
  await sleep(2_000);
  const tag = `${name}-${Date.now()}`;
  let peak = 0;
  const result = await withClient(db.url, async (client) => {
    let running = true;
    const sampling = (async () => {
      while (running) {
        const { rows } = await client.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        peak = Math.max(peak, rows[0].n);
        await sleep(100);
      }
    })();
    try {
      return await loadAll(servers, data, tag);
    } finally {
      running = false;
      await sampling;
    }
  });
  const notifications = await notificationCheck(db.url, data.classId, tag);
  for (const server of servers) await server.stop();
  const summary = { setup: name, ...result, ...notifications, peakServerConnections: peak };
  log(JSON.stringify(summary));
  return summary;
}

runMain(async () => {
  buildIfNeeded();
  const db = await createDatabase();
  // The first start migrates the fresh database; then the data of the main bench.
  const migrator = await startServer({ databaseUrl: db.url, startTimeoutMs: 300_000 });
  await migrator.stop();
  const data = await withClient(db.url, async (client) => {
    const seeded = await seedMain(client);
    await client.query('VACUUM ANALYZE');
    return seeded;
  });
  const direct = await setup('direct', db, data, { ...SERVER_ENV, DATABASE_URL: db.url });
  const bouncer = await startPgBouncer(db.url, {
    poolSize: SERVER_CONNECTIONS,
    // Within the service's DATABASE_CONNECT_TIMEOUT_MS (5 s): an outage answers 503 in time (docs/operations.md).
    queryWaitTimeoutSeconds: 5,
    settings: { max_db_connections: SERVER_CONNECTIONS },
  });
  onCleanup(() => bouncer.close());
  const pooled = await setup('pgbouncer', db, data, {
    ...SERVER_ENV,
    DATABASE_URL: bouncer.pooled(db.url),
    DATABASE_DIRECT_URL: db.url,
    DATABASE_POOLER: 'transaction',
  });
  const allowed = SERVER_CONNECTIONS + INSTANCES;
  console.log(
    JSON.stringify(
      {
        instances: INSTANCES,
        durationSeconds: DURATION,
        ratePerInstance: RATE || 'max',
        pgbouncerServerConnections: SERVER_CONNECTIONS,
        allowedServerConnections: allowed,
        direct,
        pgbouncer: pooled,
        ok:
          pooled.non2xx === 0 &&
          pooled.timeouts === 0 &&
          pooled.lost === 0 &&
          pooled.duplicated === 0 &&
          pooled.peakServerConnections <= allowed,
      },
      (key, value) => (typeof value === 'number' ? Math.round(value * 10) / 10 : value),
      2,
    ),
  );
});
