#!/usr/bin/env node
/*
 * Fan-out bench alone (bench/run.js runs the same measurement): publishes tasks in a class of 10,000
 * members and reports the publish call's latency and the time until every member's inbox row exists
 * (status SENT).
 *
 *   node bench/fanout.js
 *
 * Environment: DATABASE_URL (admin connection to a PostgreSQL server; a fresh database is created and
 * dropped), MEMBERS (default 10000), PUBLISHES (default 10), DELIVERY_POLL_INTERVAL_MS and SCHEDULER_CRON
 * (passed to the server; defaults of the service otherwise).
 */
'use strict';
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { measureFanout } = require('./lib/scenarios');
const { seedFanout } = require('./lib/seed');
const { buildIfNeeded, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const MEMBERS = Number(process.env.MEMBERS || 10000);
const PUBLISHES = Number(process.env.PUBLISHES || 10);

runMain(async () => {
  buildIfNeeded();
  const db = await createDatabase();
  const passed = ['DELIVERY_POLL_INTERVAL_MS', 'SCHEDULER_CRON'].filter((name) => process.env[name]);
  const server = await startServer({
    databaseUrl: db.url,
    env: Object.fromEntries(passed.map((name) => [name, process.env[name]])),
  });
  const seedStarted = Date.now();
  const { owner, classId } = await withClient(db.url, (client) => seedFanout(client, MEMBERS));
  console.log(`seeded ${MEMBERS} members in ${Date.now() - seedStarted} ms`);
  const summary = await measureFanout(server, db.url, {
    classId,
    auth: bearer(owner.id),
    recipients: MEMBERS + 1,
    publishes: PUBLISHES,
    log: console.log,
  });
  console.log(
    JSON.stringify(
      { members: MEMBERS, publishes: PUBLISHES, ...summary },
      (key, value) => (typeof value === 'number' ? Math.round(value * 10) / 10 : value),
      2,
    ),
  );
  await server.stop();
  await db.drop();
});
