#!/usr/bin/env node
/*
 * Daily digest bench: USERS users (default 10,000) with a digest at the same minute and 20 notifications
 * each waiting for it. Reports how long after that minute the last digest e-mail was handed to SMTP (a local
 * SMTP sink that accepts everything), the CPU time the server and its PostgreSQL backends spent from that
 * minute to the last e-mail (what a machine of its own would need, whatever else shares this one), and the
 * server's resident memory before and during the digests, for each size of SIZES (default "2000,10000"), so
 * memory can be compared across the number of users.
 *
 *   node bench/digest.js
 *
 * Environment: DATABASE_URL (admin connection to a PostgreSQL server; a fresh database per size is created
 * and dropped), SIZES, ITEMS (notifications per user, default 20), HEAP_MB (the server's V8 heap limit).
 */
'use strict';
const { SMTPServer } = require('smtp-server');
const { runMain, onCleanup } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { buildIfNeeded, rssOf, sleep, startServer } = require('./lib/server');

const rssMb = (pid) => Math.round((rssOf(pid) ?? 0) / 1048576);

const SIZES = (process.env.SIZES || '2000,10000').split(',').map(Number);
const ITEMS = Number(process.env.ITEMS || 20);
/** A V8 heap limit for the server (MB): digests that finish under it need no memory that grows with users. */
const HEAP_MB = process.env.HEAP_MB ? Number(process.env.HEAP_MB) : null;
const TARGET_SECONDS = 60;

/** An SMTP server on 127.0.0.1 that accepts every mail and counts them. */
async function startSink() {
  const sink = { count: 0, firstAt: 0, lastAt: 0, sample: '' };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    disableReverseLookup: true,
    size: 10 * 1024 * 1024,
    onData(stream, _session, callback) {
      const chunks = [];
      stream.on('data', (chunk) => {
        if (!sink.sample) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (!sink.sample) sink.sample = Buffer.concat(chunks).toString('utf8');
        sink.count += 1;
        if (!sink.firstAt) sink.firstAt = Date.now();
        sink.lastAt = Date.now();
        callback();
      });
    },
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { sink, url: `smtp://127.0.0.1:${server.server.address().port}`, close };
}

/** USERS members of one class, ITEMS published tasks, each member's notifications routed: e-mails left for the digest. */
async function seed(db, users) {
  await db.query('BEGIN');
  const [{ id: ownerId }] = (
    await db.query(
      `INSERT INTO users (email, password_hash, timezone) VALUES ('digest-owner@bench.test', 'x', 'UTC') RETURNING id`,
    )
  ).rows;
  const [{ id: classId }] = (
    await db.query(`INSERT INTO classes (name, owner_id) VALUES ('Digest class', $1) RETURNING id`, [ownerId])
  ).rows;
  await db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'OWNER')`, [
    classId,
    ownerId,
  ]);
  await db.query(
    `WITH made AS (
       INSERT INTO users (email, password_hash, timezone)
       SELECT 'digest-' || i || '@bench.test', 'x', 'UTC' FROM generate_series(1, $2::int) i RETURNING id)
     INSERT INTO class_members (class_id, user_id, role) SELECT $1, id, 'MEMBER' FROM made`,
    [classId, users],
  );
  await db.query(
    `WITH made AS (
       INSERT INTO tasks (class_id, title, description, is_published, published_at, created_by, due_at)
       SELECT $1, 'Task ' || i, 'Read chapter ' || i, true, now(), $2, now() + interval '30 days'
         FROM generate_series(1, $3::int) i RETURNING id)
     INSERT INTO notification_task_publications (task_id) SELECT id FROM made`,
    [classId, ownerId, ITEMS],
  );
  await db.query(
    `INSERT INTO notifications (user_id, type, task_id, task_title, class_id, class_name, due_at, title, content,
                                status)
     SELECT m.user_id, 'TASK_PUBLISHED', t.id, t.title, $1, 'Digest class', t.due_at,
            'New task in Digest class: ' || t.title,
            '"' || t.title || '" was published in Digest class. Due ' ||
              notification_local_time(t.due_at, 'UTC') || '.', 'SENT'
       FROM class_members m CROSS JOIN tasks t
      WHERE m.class_id = $1 AND m.role = 'MEMBER' AND t.class_id = $1`,
    [classId],
  );
  await db.query(
    `INSERT INTO notification_deliveries (notification_id, user_id, type, channel, address, status, last_error)
     SELECT n.id, n.user_id, n.type, 'EMAIL', u.email, 'SKIPPED', 'DIGEST'
       FROM notifications n JOIN users u ON u.id = n.user_id`,
  );
  // Far from now until the measurement picks its minute.
  await db.query(
    `INSERT INTO notification_schedules (user_id, digest, digest_at, digest_since)
     SELECT user_id, 'DAILY', (now() AT TIME ZONE 'UTC' + interval '12 hours')::time, now() - interval '1 hour'
       FROM class_members WHERE class_id = $1 AND role = 'MEMBER'`,
    [classId],
  );
  await db.query('COMMIT');
  await db.query('VACUUM ANALYZE');
}

async function measure(users) {
  const db = await createDatabase();
  const { sink, url, close } = await startSink();
  const server = await startServer({
    databaseUrl: db.url,
    heapMb: HEAP_MB,
    env: {
      SMTP_URL: process.env.BENCH_SMTP_POOL ? `${url}/?pool=true&maxConnections=10` : url,
      MAIL_FROM: 'bench@bench.test',
    },
  });
  const seeded = Date.now();
  await withClient(db.url, (client) => seed(client, users));
  console.log(`${users} users: seeded ${users * ITEMS} notifications in ${Date.now() - seeded} ms`);
  // The next minute at least 15 s away: the scheduler (every minute, at second 0) makes the digests then.
  const minuteMs = Math.ceil((Date.now() + 15_000) / 60_000) * 60_000;
  const digestAt = new Date(minuteMs).toISOString().slice(11, 16);
  await withClient(db.url, (client) =>
    client.query(`UPDATE notification_schedules SET digest_at = $1::time`, [digestAt]),
  );
  const rss = [];
  while (Date.now() < minuteMs - 1000) {
    rss.push(rssMb(server.pid));
    await sleep(500);
  }
  const before = Math.max(...rss.slice(-10));
  const took = server.cpu();
  let peak = before;
  const deadline = minuteMs + 3 * TARGET_SECONDS * 1000;
  while (sink.count < users && Date.now() < deadline) {
    peak = Math.max(peak, rssMb(server.pid));
    await sleep(250);
  }
  const cpu = took();
  const lastSeconds = sink.count ? (sink.lastAt - minuteMs) / 1000 : null;
  const firstSeconds = sink.count ? (sink.firstAt - minuteMs) / 1000 : null;
  const [{ digests, sent }] = await withClient(
    db.url,
    async (client) =>
      (
        await client.query(
          `SELECT count(*)::int AS digests, count(*) FILTER (WHERE status = 'SENT')::int AS sent
           FROM notification_deliveries WHERE type = 'DIGEST'`,
        )
      ).rows,
  );
  const listsAll = sink.sample.includes(`${ITEMS} notifications`);
  await server.stop();
  await close();
  await db.drop();
  return {
    users,
    mails: sink.count,
    digests,
    sent,
    firstSeconds,
    lastSeconds,
    rssBeforeMb: before,
    rssPeakMb: peak,
    nodeCpuSeconds: cpu.node / 1000,
    pgCpuSeconds: cpu.pg / 1000,
    listsAll,
  };
}

runMain(async () => {
  buildIfNeeded();
  const results = [];
  for (const users of SIZES) {
    const result = await measure(users);
    console.error(JSON.stringify(result));
    results.push(result);
  }
  console.log(
    '\n| users | digest e-mails handed to SMTP | last one after the minute | CPU node + PG | RSS before | RSS peak | met (all within 60 s) |',
  );
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of results) {
    const met =
      r.mails === r.users && r.lastSeconds !== null && r.lastSeconds <= TARGET_SECONDS && r.listsAll;
    console.log(
      `| ${r.users} | ${r.mails} | ${r.lastSeconds?.toFixed(1)} s | ${r.nodeCpuSeconds.toFixed(1)} + ${r.pgCpuSeconds.toFixed(1)} s | ${r.rssBeforeMb} MB | ${r.rssPeakMb} MB | ${met ? 'yes' : 'no'} |`,
    );
  }
});
