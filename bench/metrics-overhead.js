#!/usr/bin/env node
/*
 * The CPU time the metrics add to one request, measured in-process without the noise of a shared machine's
 * HTTP runs: the request-timing middleware (`recordRequests`) on a request with a route template, its
 * `close` listener and the histogram's observe, per request; and one scrape of the registry (text format)
 * after a realistic number of series. Uses dist/ (build first).
 *
 *   node bench/metrics-overhead.js [requests]      default 1,000,000
 */
'use strict';
const { EventEmitter } = require('node:events');
const { join } = require('node:path');
const { Metrics } = require(join(__dirname, '..', 'dist', 'common', 'metrics', 'metrics.js'));
const { recordRequests } = require(join(__dirname, '..', 'dist', 'common', 'metrics', 'http-metrics.js'));

const REQUESTS = Number(process.argv[2] ?? 1_000_000);
const ROUTES = ['/tasks/:taskId', '/classes/:classId/tasks', '/users/me/notifications', '/health/live'];

function run(metrics) {
  const middleware = recordRequests(metrics);
  const started = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i += 1) {
    const response = new EventEmitter();
    response.statusCode = i % 50 === 0 ? 404 : 200;
    const request = { method: 'GET', baseUrl: '', route: { path: ROUTES[i % ROUTES.length] } };
    middleware(request, response, () => undefined);
    response.emit('close');
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / REQUESTS;
}

async function main() {
  const baseline = (() => {
    // The same loop without the middleware: the emitter and the request object alone.
    const started = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i += 1) {
      const response = new EventEmitter();
      response.statusCode = 200;
      response.once('close', () => undefined);
      response.emit('close');
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / REQUESTS;
  })();
  const metrics = new Metrics({ metrics: { port: 0, host: '127.0.0.1' } });
  run(metrics); // warm-up
  const perRequest = run(metrics);
  const scrapeStarted = process.cpuUsage();
  const SCRAPES = 200;
  for (let i = 0; i < SCRAPES; i += 1) await metrics.registry.metrics();
  const scrape = process.cpuUsage(scrapeStarted);
  console.log(
    JSON.stringify({
      requests: REQUESTS,
      middlewareMicrosPerRequest: Number((perRequest - baseline).toFixed(2)),
      scrapeMillis: Number(((scrape.user + scrape.system) / SCRAPES / 1000).toFixed(2)),
    }),
  );
}

void main();
