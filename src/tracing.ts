/**
 * OpenTelemetry tracing, imported first by `main.ts` so that its instrumentations hook `http`, `pg` and
 * `fetch` before anything loads them. Only with `OTEL_EXPORTER_OTLP_ENDPOINT` set: without it
 * not even the SDK is loaded, and every span the code starts (`@opentelemetry/api`) is the API's no-op one.
 * The SDK reads its own `OTEL_*` variables (protocol, headers, sampler, service name); the endpoint is also
 * checked by the configuration (`observability.config.ts`), which stops a start with a malformed one.
 */
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { completeRequestSpan } from './common/tracing/http-span';
import { originOfRequest, outboundUrlAttributes } from './common/tracing/outbound-url';
import { SERVICE_NAME } from './common/tracing/spans';

let sdk: NodeSDK | null = null;

/** Starts the SDK when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; idempotent. */
export function startTracing(env: NodeJS.ProcessEnv = process.env): void {
  if (sdk || !env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  // Loaded only here, so that a service without tracing loads none of it.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  /* eslint-enable @typescript-eslint/no-require-imports */
  sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || SERVICE_NAME,
    traceExporter: new OTLPTraceExporter(),
    // Traces only: the metrics are Prometheus's (METRICS_PORT), the logs are standard output's.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Incoming requests, named by their route (`completeRequestSpan`), webhooks and S3 (node:http). Not
      // @opentelemetry/instrumentation-nestjs-core: its spans carry the URL as received (`url.full`), a
      // one-time token in the query included.
      new HttpInstrumentation({
        applyCustomAttributesOnSpan: completeRequestSpan,
        startOutgoingSpanHook: (request) => outboundUrlAttributes(originOfRequest(request)),
      }),
      // Statements by their text, never their bound values (the default of enhancedDatabaseReporting).
      // Only within a request's, a job's or a delivery's span: the heartbeats of the listener connection and
      // the start's statements would each make a trace of one span.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      // The messenger's calls to the Telegram API (fetch). Outbound calls keep their origin only
      // (`outboundUrlAttributes`): webhook paths and the bot API's hold credentials.
      new UndiciInstrumentation({ startSpanHook: (request) => outboundUrlAttributes(request.origin) }),
    ],
  });
  sdk.start();
}

/** Sends the spans still buffered and stops the SDK (graceful shutdown); nothing without tracing. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown();
  sdk = null;
}

startTracing();
