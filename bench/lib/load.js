'use strict';
const autocannon = require('autocannon');

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Nearest-rank percentile. */
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

/**
 * Drives the server with autocannon. `variants`: requests ({ path, method, headers, body or raw }) taken in turn,
 * e.g. one per bench user, so several users' tokens are used; `body` is sent as JSON, `raw` as it is. Options: connections (32), duration in s (10),
 * overallRate (requests per second over all connections; none = as fast as the server answers).
 * Answers { rps, p50, p99, total, non2xx, errors, timeouts, statusCodes }; rps counts 2xx answers and 304
 * (the answer of the conditional scenarios), non2xx the others.
 */
async function load(port, variants, { connections = 32, duration = 10, overallRate } = {}) {
  let next = 0;
  const prepared = variants.map((variant) => ({
    method: variant.method ?? 'GET',
    path: variant.path,
    headers: {
      ...(variant.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...variant.headers,
    },
    ...(variant.body !== undefined ? { body: JSON.stringify(variant.body) } : {}),
    ...(variant.raw !== undefined ? { body: variant.raw } : {}),
  }));
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration,
    ...(overallRate ? { overallRate } : {}),
    requests: [
      {
        setupRequest: (request) => {
          const variant = prepared[next];
          next = (next + 1) % prepared.length;
          return { ...request, ...variant, headers: { ...request.headers, ...variant.headers } };
        },
      },
    ],
  });
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
  );
  const notModified = statusCodes[304] ?? 0;
  const ok = result['2xx'] + notModified;
  return {
    rps: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx - notModified,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

module.exports = { load, median, percentile };
