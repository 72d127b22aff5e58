import { Env, int, optional, str, url } from './env';

/**
 * Metrics and traces (docs/operations.md, "Metrics" and "Traces").
 * - `METRICS_PORT` (unset: no metrics server): the port of the Prometheus endpoint `GET /metrics`, a server of
 *   its own beside `PORT`, so the metrics are never public by accident.
 * - `METRICS_HOST` (`0.0.0.0`): the address that server listens on.
 * - `OTEL_EXPORTER_OTLP_ENDPOINT` (unset: no tracing): OpenTelemetry's own variable, read by `src/tracing.ts`
 *   before anything else loads; checked here so a typo stops the start instead of losing the traces.
 */
export interface ObservabilityConfig {
  metrics: { port: number | null; host: string };
  tracing: { endpoint: string | null };
}

export function observabilityConfig(env: Env): ObservabilityConfig {
  const port = optional(env, 'METRICS_PORT') === null ? null : int(env, 'METRICS_PORT', 0, 0, 65535);
  return {
    metrics: { port, host: str(env, 'METRICS_HOST', '0.0.0.0') },
    tracing: { endpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', null, ['http:', 'https:']) },
  };
}
