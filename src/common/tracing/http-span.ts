import { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { loggableUrl } from '../http/logger';

/**
 * What the HTTP instrumentation adds to a request's span once it is answered: the request id (`request.id`,
 * set by `logRequests`), and its URL as the logs keep it, secrets in the query and the calendar feed path
 * replaced (the instrumentation records the URL as received).
 */
export function completeRequestSpan(span: Span, request: unknown): void {
  if (!(request instanceof IncomingMessage)) return;
  const { id, originalUrl } = request as IncomingMessage & { id?: unknown; originalUrl?: string };
  if (typeof id === 'string') span.setAttribute('http.request_id', id);
  const url = loggableUrl(originalUrl ?? request.url ?? '');
  const queryStart = url.indexOf('?');
  span.setAttribute('url.path', queryStart < 0 ? url : url.slice(0, queryStart));
  if (queryStart >= 0) span.setAttribute('url.query', url.slice(queryStart + 1));
}
