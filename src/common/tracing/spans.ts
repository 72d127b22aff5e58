import { Attributes, SpanStatusCode, trace } from '@opentelemetry/api';

/** The service's name in its traces, unless OTEL_SERVICE_NAME names it otherwise. */
export const SERVICE_NAME = 'classroom-task-service';

/** The service's own spans; the API's no-op tracer until `src/tracing.ts` starts the SDK. */
const tracer = trace.getTracer(SERVICE_NAME);

/**
 * Runs `work` in a span of its own named `name` (a child of the active one, if any): the periodic jobs, each
 * delivery attempt, each SMTP send. A failure marks the span as failed and is rethrown.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The ids of the active span as log fields (`trace_id`, `span_id`); none outside a span. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const context = trace.getActiveSpan()?.spanContext();
  return context ? { trace_id: context.traceId, span_id: context.spanId } : {};
}

/** The trace id of the active span, for the request's log line (its span is the first middleware's). */
export function traceIdField(): { trace_id?: string } {
  const traceId = trace.getActiveSpan()?.spanContext().traceId;
  return traceId ? { trace_id: traceId } : {};
}
