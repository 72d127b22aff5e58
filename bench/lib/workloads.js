'use strict';
/* The request mixes of the throughput scenarios, over the data of seed.js `seedMain`. */
const { request } = require('./http');
const { bearer } = require('./tokens');

/** `n` items of `list` taken round-robin. */
const cycle = (list, n, make) => Array.from({ length: n }, (_, i) => make(list[i % list.length], i));

/**
 * Each scenario: key, name, target ({ratio, p99}), status (the answer every request must get, 200 unless
 * said) and variants, the requests autocannon takes in turn (several users' tokens, several tasks).
 */
function throughputScenarios(data) {
  const auth = (user) => ({ authorization: bearer(user.id) });
  const { members, taskIds, writableTaskIds } = data;
  return [
    { key: 'live', name: 'GET /health/live', variants: [{ path: '/health/live' }] },
    {
      key: 'task',
      name: 'GET /tasks/:taskId as MEMBER',
      target: { ratio: 0.3, p99: 100 },
      variants: cycle(members, 190, (user, i) => ({
        path: `/tasks/${taskIds[(i * 7) % taskIds.length]}`,
        headers: auth(user),
      })),
    },
    {
      key: 'classTasks',
      name: 'GET /classes/:classId/tasks (30 tasks, 40 members)',
      target: { ratio: 0.2 },
      variants: members.map((user) => ({ path: `/classes/${data.classId}/tasks`, headers: auth(user) })),
    },
    {
      key: 'inbox1',
      name: 'GET /users/me/notifications page 1',
      target: { ratio: 0.2 },
      variants: [data.owner, data.admin, ...members].map((user) => ({
        path: '/users/me/notifications',
        headers: auth(user),
      })),
    },
    {
      key: 'inbox15',
      name: 'GET /users/me/notifications page 15',
      target: { ratio: 0.2 },
      variants: [data.owner, data.admin, ...members].map((user) => ({
        path: `/users/me/notifications?cursor=${data.cursorOf.get(user.id)}`,
        headers: auth(user),
      })),
    },
    {
      key: 'put',
      name: 'PUT /tasks/:taskId/submissions/me',
      target: { ratio: 0.15 },
      variants: cycle(members, 190, (user, i) => ({
        method: 'PUT',
        path: `/tasks/${writableTaskIds[(i * 7) % writableTaskIds.length]}/submissions/me`,
        headers: auth(user),
        body: { content: `Answer ${i}: ${'a sentence of the essay, '.repeat(20)}` },
      })),
    },
  ];
}

/**
 * The conditional reads: the scenarios of `keys` again, each request with the `If-None-Match`
 * of its current answer, so every answer is a 304 without a body. The tags are read from the server first.
 */
async function conditionalScenarios(port, scenarios, keys) {
  const conditional = [];
  for (const scenario of scenarios.filter((s) => keys.includes(s.key))) {
    const variants = [];
    for (const variant of scenario.variants) {
      const answer = await request(port, variant.path, { headers: variant.headers });
      if (answer.status !== 200 || !answer.etag)
        throw new Error(`${variant.path}: no ETag (${answer.status})`);
      variants.push({ ...variant, headers: { ...variant.headers, 'if-none-match': answer.etag } });
    }
    conditional.push({
      key: `${scenario.key}304`,
      name: `${scenario.name}, If-None-Match → 304`,
      status: 304,
      variants,
    });
  }
  return conditional;
}

module.exports = { conditionalScenarios, cycle, throughputScenarios };
