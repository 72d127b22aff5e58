#!/usr/bin/env node
/*
 * Reminder bench: a class of 10,000 members whose tasks' reminder moments come one after another. For each
 * task it reports the time from the reminder moment (dueAt − REMINDER_HOURS_BEFORE_DUE) to its first
 * reminder row (the scheduled job's statement; SCHEDULER_CRON fires every second here, and the moment is set
 * 50 ms before a whole second) and to all 10,001 inbox rows SENT. Then, with the server stopped, EXPLAIN
 * ANALYZE of the two reminder statements exactly as the build sends them (text and parameters recorded from
 * its NotificationsRepository), each in a transaction rolled back, so every run sees the same data: the
 * class-wide one (one task, 10,001 reminders) and the one of extended deadlines (a batch of 1,000).
 *
 *   node bench/reminders.js
 *
 * Environment: DATABASE_URL (admin connection to a PostgreSQL server; a fresh database is created and
 * dropped), MEMBERS (default 10000), RUNS (tasks coming due, default 5), EXPLAINS (default 5), PLANS=1 (print
 * the plans too).
 */
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { median, percentile } = require('./lib/load');
const { loadAverage } = require('./lib/report');
const { REMINDER_HOURS, seedReminders } = require('./lib/seed');
const { ROOT, buildIfNeeded, sleep, startServer } = require('./lib/server');

const MEMBERS = Number(process.env.MEMBERS || 10000);
const RUNS = Number(process.env.RUNS || 5);
const EXPLAINS = Number(process.env.EXPLAINS || 5);
/** PLANS=1: also print each statement's plan (EXPLAIN ANALYZE, BUFFERS; one more execution, rolled back). */
const PLANS = process.env.PLANS === '1';
const HOUR_MS = 3_600_000;
/** The reminder moment comes this long before the scheduled job's next tick (a whole second). */
const BEFORE_TICK_MS = 50;
/** Pause after a run, so the deliveries it queued do not run into the next measurement. */
const SETTLE_MS = 5_000;
/** Extensions of the extended-deadline statement: more than its batch of 1,000. */
const EXTENSIONS = Math.min(MEMBERS, 2000);

/** A module of the build under test (its node_modules, its dist/). */
const fromBuild = (id) => require(require.resolve(id, { paths: [ROOT] }));

/**
 * The reminder statements as the build's NotificationsRepository sends them, recorded by a pg client subclass
 * on a data source of the bench's own while nothing is due (so they produce nothing).
 */
async function reminderStatements(databaseUrl) {
  const { Client } = fromBuild('pg');
  const { DataSource } = fromBuild('typeorm');
  const sent = [];
  class RecordingClient extends Client {
    query(config, values, ...rest) {
      if (typeof config === 'string') sent.push({ text: config, values });
      else if (config && typeof config.text === 'string')
        sent.push({ text: config.text, values: config.values });
      return super.query(config, values, ...rest);
    }
  }
  const dataSource = new DataSource({
    type: 'postgres',
    url: databaseUrl,
    extra: { Client: RecordingClient },
  });
  await dataSource.initialize();
  try {
    const { NotificationsRepository } = fromBuild(
      join(ROOT, 'dist', 'notifications', 'notifications.repository.js'),
    );
    // Since the producer API, the repository produces through a Notifier; before, it ran the statements itself.
    const notifierFile = join(ROOT, 'dist', 'notifications', 'production', 'notifier.js');
    const notifier = existsSync(notifierFile)
      ? new (fromBuild(notifierFile).Notifier)({ database: { bulkQueryTimeoutMs: 600_000 } })
      : undefined;
    const repository = new NotificationsRepository(dataSource, notifier);
    const longest = async (call) => {
      sent.length = 0;
      await call();
      return sent.reduce((found, statement) =>
        statement.text.length > found.text.length ? statement : found,
      );
    };
    return {
      classWide: await longest(() => repository.remindBatch(REMINDER_HOURS)),
      extended: await longest(() => repository.remindExtendedBatch(REMINDER_HOURS)),
    };
  } finally {
    await dataSource.destroy();
  }
}

/** Reminder rows of a task: made, SENT, and when the first was made (ms since the epoch). */
async function remindersOf(db, taskId) {
  const {
    rows: [row],
  } = await db.query(
    `SELECT count(*)::int AS made, (count(*) FILTER (WHERE status = 'SENT'))::int AS sent,
            (extract(epoch FROM min(created_at)) * 1000)::float8 AS first
       FROM notifications WHERE task_id = $1 AND type = 'TASK_DUE_REMINDER'`,
    [taskId],
  );
  return row;
}

/** Moves the task's due time so that its reminder moment comes just before a tick; answers the moment. */
async function comeDue(db, taskId) {
  const tick = Math.ceil((Date.now() + 1_500) / 1_000) * 1_000;
  const moment = tick - BEFORE_TICK_MS;
  await db.query(`UPDATE tasks SET due_at = $2 WHERE id = $1`, [
    taskId,
    new Date(moment + REMINDER_HOURS[0] * HOUR_MS),
  ]);
  return moment;
}

async function measureRun(db, taskId, recipients) {
  const moment = await comeDue(db, taskId);
  for (;;) {
    const { made, sent, first } = await remindersOf(db, taskId);
    if (sent >= recipients) return { madeMs: first - moment, sentMs: Date.now() - moment, made };
    if (Date.now() - moment > 120_000)
      throw new Error(`only ${sent} of ${recipients} reminders SENT after 120 s`);
    await sleep(20);
  }
}

/** The statement's result in a transaction rolled back, and EXPLAIN ANALYZE of it `EXPLAINS` times likewise. */
async function explain(db, { text, values }) {
  const rolledBack = async (work) => {
    await db.query('BEGIN');
    try {
      return await work();
    } finally {
      await db.query('ROLLBACK');
    }
  };
  const started = performance.now();
  const [result] = (await rolledBack(() => db.query(text, values))).rows;
  const plainMs = performance.now() - started;
  const executions = [];
  const plannings = [];
  for (let n = 0; n < EXPLAINS; n += 1) {
    const {
      rows: [row],
    } = await rolledBack(() => db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values));
    const [plan] = row['QUERY PLAN'];
    executions.push(plan['Execution Time']);
    plannings.push(plan['Planning Time']);
  }
  const plan = PLANS
    ? (await rolledBack(() => db.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values))).rows
        .map((row) => row['QUERY PLAN'])
        .join('\n')
    : null;
  return {
    result,
    plainMs,
    executionMs: median(executions),
    planningMs: median(plannings),
    executions,
    plan,
  };
}

runMain(async () => {
  const build = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  const loadBefore = loadAverage();
  buildIfNeeded();
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, env: { SCHEDULER_CRON: '* * * * * *' } });
  const seedStarted = Date.now();
  const { classId, taskIds } = await withClient(db.url, (client) => seedReminders(client, MEMBERS, RUNS + 2));
  console.log(`seeded ${MEMBERS} members and ${RUNS + 2} tasks in ${Date.now() - seedStarted} ms`);
  const statements = await reminderStatements(db.url);
  const recipients = MEMBERS + 1;
  const runs = await withClient(db.url, async (client) => {
    const measured = [];
    for (let run = 0; run < RUNS; run += 1) {
      const outcome = await measureRun(client, taskIds[run], recipients);
      console.log(
        `run ${run + 1}: first reminder ${outcome.madeMs.toFixed(0)} ms after the moment, ` +
          `${recipients} SENT after ${outcome.sentMs.toFixed(0)} ms`,
      );
      measured.push(outcome);
      await sleep(SETTLE_MS);
    }
    return measured;
  });
  await server.stop();

  const plans = await withClient(db.url, async (client) => {
    const [classWideTask, extendedTask] = taskIds.slice(RUNS);
    // The moment came an hour ago, the due time is still ahead.
    await client.query(`UPDATE tasks SET due_at = now() + $2 * interval '1 hour' WHERE id = $1`, [
      classWideTask,
      REMINDER_HOURS[0] - 1,
    ]);
    // The class-wide due time has passed; EXTENSIONS members have their own, whose moment came an hour ago.
    await client.query(`UPDATE tasks SET due_at = now() - interval '1 hour' WHERE id = $1`, [extendedTask]);
    await client.query(
      `INSERT INTO task_extensions (task_id, user_id, class_id, due_at)
       SELECT $1, user_id, class_id, now() + $4 * interval '1 hour'
         FROM class_members WHERE class_id = $2 AND role = 'MEMBER' ORDER BY user_id LIMIT $3`,
      [extendedTask, classId, EXTENSIONS, REMINDER_HOURS[0] - 1],
    );
    await client.query('VACUUM ANALYZE');
    return {
      classWide: await explain(client, statements.classWide),
      extended: await explain(client, statements.extended),
    };
  });
  for (const [name, plan] of Object.entries(plans)) {
    console.log(
      `${name}: ${JSON.stringify(plan.result)}; EXPLAIN ANALYZE execution ${plan.executions
        .map((ms) => ms.toFixed(0))
        .join(', ')} ms`,
    );
    if (plan.plan) console.log(plan.plan);
  }

  const made = runs.map((run) => run.madeMs);
  const sent = runs.map((run) => run.sentMs);
  console.log(
    JSON.stringify(
      {
        root: ROOT,
        build,
        members: MEMBERS,
        runs: RUNS,
        loadAverage: { before: loadBefore, after: loadAverage() },
        firstReminderP50: median(made),
        allSentP50: median(sent),
        allSentP95: percentile(sent, 95),
        allSentMax: Math.max(...sent),
        classWideStatement: {
          executionP50: plans.classWide.executionMs,
          planningP50: plans.classWide.planningMs,
          plainMs: plans.classWide.plainMs,
        },
        extendedStatement: {
          executionP50: plans.extended.executionMs,
          planningP50: plans.extended.planningMs,
          plainMs: plans.extended.plainMs,
        },
      },
      (key, value) => (typeof value === 'number' ? Math.round(value * 10) / 10 : value),
      2,
    ),
  );
  await db.drop();
});
