#!/usr/bin/env node
/*
 * Grading with a rubric against grading with a score alone, on one server in the same rounds:
 * PATCH /tasks/:taskId/submissions/:submissionId/grade with `{score}` and with `{rubric}` (one level for each
 * of CRITERIA criteria, the score following from the levels), and GET /health/live as the floor. Rounds
 * interleave the three; the ratios are medians of each round's. Also the statements each grading sends.
 * Target: a rubric grading costs at most 1.5 times a score grading (req/s, p50, CPU per request).
 *
 *   node bench/grading.js
 *
 * Environment: DATABASE_URL (admin connection; a fresh database is created and dropped), MEMBERS (200),
 * CRITERIA (5), LEVELS (4), ROUNDS (3), DURATION (seconds per run, 10), CONNECTIONS (32).
 */
'use strict';
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { expectStatus } = require('./lib/http');
const { median } = require('./lib/load');
const { statementsPerRequest, throughputRounds } = require('./lib/scenarios');
const { seedGrading } = require('./lib/seed');
const { buildIfNeeded, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const MEMBERS = Number(process.env.MEMBERS || 200);
const CRITERIA = Number(process.env.CRITERIA || 5);
const LEVELS = Number(process.env.LEVELS || 4);
const ROUNDS = Number(process.env.ROUNDS || 3);
const DURATION = Number(process.env.DURATION || 10);
const CONNECTIONS = Number(process.env.CONNECTIONS || 32);
const TARGET = 1.5;

const round3 = (value) => Math.round(value * 1000) / 1000;

runMain(async () => {
  buildIfNeeded();
  const db = await createDatabase();
  const server = await startServer({ databaseUrl: db.url, withProbe: true });
  const data = await withClient(db.url, (client) =>
    seedGrading(client, { members: MEMBERS, criteria: CRITERIA, levels: LEVELS }),
  );
  await withClient(db.url, (client) => client.query('VACUUM ANALYZE'));
  const headers = { authorization: bearer(data.owner.id) };
  const gradePath = (submissionId) => `/tasks/${data.taskId}/submissions/${submissionId}/grade`;
  const scenarios = [
    { key: 'live', name: 'GET /health/live', variants: [{ path: '/health/live' }] },
    {
      key: 'score',
      name: 'PATCH …/grade {score}',
      variants: data.submissionIds.map((id, i) => ({
        method: 'PATCH',
        path: gradePath(id),
        headers,
        body: { score: (i % 40) + 0.5, feedback: 'Well argued; see the margin notes.' },
      })),
    },
    {
      key: 'rubric',
      name: `PATCH …/grade {rubric} (${CRITERIA} criteria)`,
      variants: data.submissionIds.map((id, i) => ({
        method: 'PATCH',
        path: gradePath(id),
        headers,
        body: {
          feedback: 'Well argued; see the margin notes.',
          rubric: data.rubric.map(({ criterionId, levelIds }, c) => ({
            criterionId,
            levelId: levelIds[(i + c) % levelIds.length],
            ...(c === 0 ? { comment: 'The thesis could be sharper.' } : {}),
          })),
        },
      })),
    },
  ];
  // Every submission graded once both ways first: the first grade releases it (GRADE_RELEASED); later ones
  // are the steady state measured.
  for (const scenario of scenarios.slice(1))
    for (const variant of scenario.variants) await expectStatus(200, server.port, variant.path, variant);
  const statements = {};
  for (const scenario of scenarios.slice(1))
    statements[scenario.key] = (await statementsPerRequest(server, scenario.variants)).perRequest;

  const results = await throughputRounds(server, scenarios, {
    rounds: ROUNDS,
    duration: DURATION,
    connections: CONNECTIONS,
    referenceKey: 'live',
    log: (line) => console.error(line),
  });
  const { score, rubric } = results;
  const perRound = (pick) => median(score.runs.map((run, i) => pick(rubric.runs[i]) / pick(run)));
  const cost = {
    // How many times a score grading's cost a rubric grading has: time per request, latency, CPU.
    reqTime: median(score.runs.map((run, i) => run.rps / rubric.runs[i].rps)),
    p50: perRound((run) => run.p50),
    cpu: perRound((run) => run.cpuNode + run.cpuPg),
  };
  const summary = {
    members: MEMBERS,
    criteria: CRITERIA,
    levels: LEVELS,
    connections: CONNECTIONS,
    statementsPerRequest: statements,
    score: {
      rps: score.rps,
      p50: score.p50,
      p99: score.p99,
      ratio: score.ratio,
      cpuNode: score.cpuNode,
      cpuPg: score.cpuPg,
    },
    rubric: {
      rps: rubric.rps,
      p50: rubric.p50,
      p99: rubric.p99,
      ratio: rubric.ratio,
      cpuNode: rubric.cpuNode,
      cpuPg: rubric.cpuPg,
    },
    rubricCostTimesScore: cost,
    target: `≤ ${TARGET}`,
    met: Object.values(cost).every((value) => value <= TARGET),
  };
  console.log(
    JSON.stringify(summary, (key, value) => (typeof value === 'number' ? round3(value) : value), 2),
  );
  await server.stop();
  await db.drop();
});
