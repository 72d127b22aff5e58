#!/usr/bin/env node
/*
 * Live inbox and calendar feed bench (issue 17):
 * - streams: GET /tasks/:taskId under load with no open stream and with STREAMS open live inbox streams on
 *   the same instance (5 per user), rounds interleaved; the ratio of the two is the cost of the streams;
 *   also the time until a notification created meanwhile reaches every stream of its user.
 * - calendar: GET /calendar/<token>.ics of a member of FEED_CLASSES classes of TASKS_PER_CLASS tasks, against
 *   GET /health/live in the same round, and the statements one feed request sends.
 *
 *   node bench/live.js
 *
 * Environment: DATABASE_URL (admin connection; a fresh database is created and dropped), STREAMS (1000),
 * FEED_CLASSES (20), TASKS_PER_CLASS (100), ROUNDS (3), DURATION (seconds per run, 10).
 */
'use strict';
const http = require('node:http');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { request } = require('./lib/http');
const { load, median } = require('./lib/load');
const { seedLive } = require('./lib/seed');
const { buildIfNeeded, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const STREAMS = Number(process.env.STREAMS || 1000);
const FEED_CLASSES = Number(process.env.FEED_CLASSES || 20);
const TASKS_PER_CLASS = Number(process.env.TASKS_PER_CLASS || 100);
const ROUNDS = Number(process.env.ROUNDS || 3);
const DURATION = Number(process.env.DURATION || 10);
const STREAMS_PER_USER = 5;

/** Opens one live inbox stream; answers { close(), received(text) } once the first event arrived. */
function openStream(port, auth) {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path: '/users/me/notifications/stream',
        headers: { Authorization: auth },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          const first = text === '';
          text += chunk;
          if (first) resolve({ close: () => req.destroy(), received: (part) => text.includes(part) });
        });
      },
    );
    req.on('error', (error) => (text === '' ? reject(error) : undefined));
  });
}

async function openStreams(port, users) {
  const streams = [];
  for (let i = 0; i < STREAMS; i += 50) {
    const batch = Array.from({ length: Math.min(50, STREAMS - i) }, (_, j) => {
      const user = users[Math.floor((i + j) / STREAMS_PER_USER)];
      return openStream(port, bearer(user.id)).then((stream) => ({ user, stream }));
    });
    streams.push(...(await Promise.all(batch)));
  }
  return streams;
}

runMain(async () => {
  buildIfNeeded();
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, withProbe: true });
  const seeded = await withClient(db.url, (client) =>
    seedLive(client, {
      streamUsers: Math.ceil(STREAMS / STREAMS_PER_USER),
      feedClasses: FEED_CLASSES,
      tasksPerClass: TASKS_PER_CLASS,
    }),
  );
  await withClient(db.url, (client) => client.query('VACUUM ANALYZE'));
  const taskRead = seeded.users
    .slice(0, 20)
    .map((user) => ({ path: `/tasks/${seeded.taskId}`, headers: { Authorization: bearer(user.id) } }));
  const live = [{ path: '/health/live' }];
  const run = (variants) => load(server.port, variants, { duration: DURATION });
  // Warm-up: prepared statements, JIT.
  await load(server.port, taskRead, { duration: 3 });

  const ratios = [];
  const rows = [];
  let delivery = null;
  for (let round = 0; round < ROUNDS; round += 1) {
    const without = await run(taskRead);
    const streams = await openStreams(server.port, seeded.users);
    const withStreams = await run(taskRead);
    if (round === 0) {
      // A notification for one user reaches that user's 5 streams: time from the commit to the last one.
      const target = streams[0].user;
      const mine = streams.filter((entry) => entry.user === target);
      const started = Date.now();
      const [row] = await withClient(db.url, (client) =>
        client
          .query(
            `INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, title, content, status)
             VALUES ($1, 'TASK_PUBLISHED', $2, $3, 'Bench', 'Live class', 'Bench', 'Bench', 'SENT') RETURNING id`,
            [target.id, seeded.taskId, seeded.classId],
          )
          .then((result) => result.rows),
      );
      while (!mine.every((entry) => entry.stream.received(row.id))) {
        if (Date.now() - started > 10_000) throw new Error('notification not delivered within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      delivery = Date.now() - started;
    }
    for (const { stream } of streams) stream.close();
    // Let the closed streams' rows go before the next round opens them again.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    ratios.push(withStreams.rps / without.rps);
    rows.push({
      round,
      without: without.rps,
      with: withStreams.rps,
      p99Without: without.p99,
      p99With: withStreams.p99,
    });
    console.log(JSON.stringify(rows[rows.length - 1]));
  }

  const feed = await request(server.port, '/users/me/calendar-feed', {
    method: 'PUT',
    auth: bearer(seeded.reader.id),
    json: true,
  });
  const feedPath = new URL(feed.body.url).pathname;
  const { perRequest: statements } = await server.probe.countStatements(() => request(server.port, feedPath));
  const sample = await (await fetch(`http://127.0.0.1:${server.port}${feedPath}`)).text();
  // One request at a time, as calendar clients fetch: the latency of a feed on its own.
  const single = [];
  for (let i = 0; i < 21; i += 1) single.push((await request(server.port, feedPath)).ms);
  const feedRatios = [];
  const feedRuns = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const floor = await run(live);
    const calendar = await run([{ path: feedPath }]);
    feedRatios.push(calendar.rps / floor.rps);
    feedRuns.push(calendar);
  }
  const summary = {
    streams: STREAMS,
    taskReadRps: rows,
    ratioWithStreams: median(ratios),
    notificationToFiveStreamsMs: delivery,
    feed: {
      classes: FEED_CLASSES,
      tasks: FEED_CLASSES * TASKS_PER_CLASS,
      events: (sample.match(/BEGIN:VEVENT/g) || []).length,
      bytes: Buffer.byteLength(sample),
      statements,
      singleRequestMsP50: median(single),
      rps: median(feedRuns.map((r) => r.rps)),
      p50: median(feedRuns.map((r) => r.p50)),
      p99: median(feedRuns.map((r) => r.p99)),
      ratioToHealthLive: median(feedRatios),
    },
  };
  console.log(
    JSON.stringify(
      summary,
      (key, value) => (typeof value === 'number' ? Math.round(value * 1000) / 1000 : value),
      2,
    ),
  );
  await server.stop();
  await db.drop();
});
