'use strict';
/*
 * Loaded into the server under test with `node --require bench/lib/probe-preload.js dist/main.js`; does
 * nothing unless BENCH_PROBE_PORT is set. It adds no code to src/ and patches nothing; through public APIs it
 *  - counts the SQL statements sent while serving HTTP requests (BEGIN and COMMIT included): each request
 *    enters an AsyncLocalStorage context (Node's `http.server.request.start` diagnostics channel), and the
 *    service's connections publish every statement in the context it is sent from (its STATEMENTS_CHANNEL,
 *    dist/database/fail-fast-client.js), so the queries of background jobs (notification poll, scheduler)
 *    are not counted. Both channels are only listened to while counting, so throughput runs do not pay for it;
 *  - measures an event-loop delay histogram (perf_hooks.monitorEventLoopDelay, 10 ms resolution).
 * and answers on 127.0.0.1:BENCH_PROBE_PORT:
 *   POST /count/start  starts a recording      POST /count/stop  ends it: {requests, statements, texts}
 *   POST /eld/reset    clears the histogram     GET /eld          {p50, p99, max, mean} in ms
 *   POST /profile/start  starts the V8 CPU profiler  POST /profile/stop  its profile (.cpuprofile JSON)
 */
const port = Number(process.env.BENCH_PROBE_PORT);
if (port) install(port);

function install(probePort) {
  const { AsyncLocalStorage } = require('node:async_hooks');
  const { subscribe, unsubscribe } = require('node:diagnostics_channel');
  const http = require('node:http');
  const { join } = require('node:path');
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  // The service's own module, from the working directory (the repository), like dist/main.js.
  const { STATEMENTS_CHANNEL } = require(join(process.cwd(), 'dist', 'database', 'fail-fast-client.js'));
  const REQUEST_CHANNEL = 'http.server.request.start';

  const scope = new AsyncLocalStorage();
  let recording = null;
  let probeServer = null;

  const onRequest = ({ server }) => {
    if (recording === null || server === probeServer) return;
    recording.requests += 1;
    // The rest of this request's handling runs in the recording's context.
    scope.enterWith(recording);
  };
  const onStatement = ({ text }) => {
    const current = scope.getStore();
    if (!current || current !== recording) return;
    current.statements += 1;
    current.texts.set(text, (current.texts.get(text) ?? 0) + 1);
  };

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const ms = (ns) => Math.round((ns / 1e6) * 10) / 10;

  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );

  const routes = {
    'POST /profile/start': async () => {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 200 });
      await post('Profiler.start');
      return { ok: true };
    },
    'POST /profile/stop': async () => (await post('Profiler.stop')).profile,
    'POST /count/start': () => {
      if (recording === null) {
        subscribe(REQUEST_CHANNEL, onRequest);
        subscribe(STATEMENTS_CHANNEL, onStatement);
      }
      recording = { requests: 0, statements: 0, texts: new Map() };
      return { ok: true };
    },
    'POST /count/stop': () => {
      const done = recording ?? { requests: 0, statements: 0, texts: new Map() };
      if (recording !== null) {
        unsubscribe(REQUEST_CHANNEL, onRequest);
        unsubscribe(STATEMENTS_CHANNEL, onStatement);
      }
      recording = null;
      scope.disable();
      return { requests: done.requests, statements: done.statements, texts: [...done.texts] };
    },
    'POST /eld/reset': () => {
      delay.reset();
      return { ok: true };
    },
    'GET /eld': () => ({
      p50: ms(delay.percentile(50)),
      p99: ms(delay.percentile(99)),
      max: ms(delay.max),
      mean: ms(delay.mean),
    }),
  };
  probeServer = http.createServer((req, res) => {
    const route = routes[`${req.method} ${req.url}`];
    res.setHeader('Content-Type', 'application/json');
    if (!route) {
      res.statusCode = 404;
      res.end('{}');
      return;
    }
    Promise.resolve()
      .then(route)
      .then(
        (body) => res.end(JSON.stringify(body)),
        (error) => {
          res.statusCode = 500;
          res.end(JSON.stringify({ error: error.message }));
        },
      );
  });
  probeServer.listen(probePort, '127.0.0.1');
  probeServer.unref();
}
