'use strict';
/*
 * Loaded into the server under test with `node --require bench/lib/probe-preload.js dist/main.js`; does
 * nothing unless BENCH_PROBE_PORT is set. It adds no code to src/: it wraps, from outside,
 *  - pg.Client.prototype.query: counts the SQL statements sent while serving HTTP requests (BEGIN and
 *    COMMIT included). Each request runs in an AsyncLocalStorage context, so the queries of background jobs
 *    (notification poll, scheduler) are not counted. The context is only entered while counting, and
 *    disabled afterwards, so throughput runs do not pay for it;
 *  - an event-loop delay histogram (perf_hooks.monitorEventLoopDelay, 10 ms resolution).
 * and answers on 127.0.0.1:BENCH_PROBE_PORT:
 *   POST /count/start  starts a recording      POST /count/stop  ends it: {requests, statements, texts}
 *   POST /eld/reset    clears the histogram     GET /eld          {p50, p99, max, mean} in ms
 *   POST /profile/start  starts the V8 CPU profiler  POST /profile/stop  its profile (.cpuprofile JSON)
 */
const port = Number(process.env.BENCH_PROBE_PORT);
if (port) install(port);

function install(probePort) {
  const { AsyncLocalStorage } = require('node:async_hooks');
  const http = require('node:http');
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  // The service's own pg: resolved from the working directory (the repository), like dist/main.js does.
  const pg = require(require.resolve('pg', { paths: [process.cwd()] }));

  const scope = new AsyncLocalStorage();
  let recording = null;
  let probeServer = null;

  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event !== 'request' || recording === null || this === probeServer)
      return emit.call(this, event, ...args);
    recording.requests += 1;
    return scope.run(recording, () => emit.call(this, event, ...args));
  };

  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, ...rest) {
    const current = scope.getStore();
    if (current && current === recording) {
      current.statements += 1;
      const text = typeof config === 'string' ? config : String(config && config.text);
      current.texts.set(text, (current.texts.get(text) ?? 0) + 1);
    }
    return query.call(this, config, ...rest);
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
      recording = { requests: 0, statements: 0, texts: new Map() };
      return { ok: true };
    },
    'POST /count/stop': () => {
      const done = recording ?? { requests: 0, statements: 0, texts: new Map() };
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
