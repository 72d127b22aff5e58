'use strict';
/*
 * What the quick start of @nestjs/observe adds to an application (docs.nestjs.com/observability/sdk):
 * `ObserveModule.forRoot()` among the root module's imports, and `ObserveInstrument` as the `instrument` option
 * of NestFactory.create. Required only by the variant of the build that bench/observe-overhead.js writes to
 * bench/.tmp/ (its copy of dist/bootstrap.js calls the two exports below); the service does not depend on the
 * SDK, which that bench installs with `npm install --no-save`.
 */
const { createObserveModule } = require('@nestjs/observe');

const { ObserveModule, ObserveInstrument } = createObserveModule();

/** The root module (AppModule.forRoot's dynamic module) with the SDK's module imported too. */
function withObserve(root) {
  const endpoint = process.env.OBSERVE_ENDPOINT;
  // Without it the SDK posts to its hosted collector, which this machine cannot reach.
  if (!endpoint) throw new Error('OBSERVE_ENDPOINT (the bench sink) is not set');
  return {
    ...root,
    imports: [
      ...(root.imports ?? []),
      // Everything else at the SDK's defaults: class and method spans, pg and outbound HTTP spans, runtime
      // metrics, trace id in ConsoleLogger lines, a batch every 5 s.
      ObserveModule.forRoot({
        appKey: 'bench',
        appSecret: 'bench',
        serviceId: 'classroom-task-service',
        endpoint,
      }),
    ],
  };
}

module.exports = { ObserveInstrument, withObserve };
