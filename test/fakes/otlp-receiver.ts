import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the receiver keeps it: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
}

/** OTLP/JSON's AnyValue: one of its typed fields. */
type AnyValue = Record<string, unknown>;
interface ExportRequest {
  resourceSpans?: {
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: AnyValue }[];
      }[];
    }[];
  }[];
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds `/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Requests to any other path (metrics, logs): none are expected. */
  otherPaths: string[];
  close(): Promise<void>;
}

const plain = (value: AnyValue): unknown => Object.values(value)[0];

/**
 * An OpenTelemetry collector's OTLP/HTTP trace endpoint in the JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL
 * `http/json`, the HTTP exporter's): it keeps every span it is sent.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const otherPaths: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        otherPaths.push(`${request.method} ${request.url}`);
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const resource of body.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, plain(a.value)])),
            });
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    otherPaths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
