'use strict';
/* The request mixes of the throughput scenarios, over the data of seed.js `seedMain`. */
const { bearer } = require('./tokens');

/** `n` items of `list` taken round-robin. */
const cycle = (list, n, make) => Array.from({ length: n }, (_, i) => make(list[i % list.length], i));

/**
 * Each scenario: key, name, target ({ratio, p99}) and variants, the requests autocannon takes in turn
 * (several users' tokens, several tasks).
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

module.exports = { cycle, throughputScenarios };
