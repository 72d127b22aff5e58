import { IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { loggableUrl } from '../http/logger';
import { routeTemplate } from '../http/route-template';

/**
 * What the HTTP instrumentation adds to a request's span once it is answered: the route template that took
 * it (`http.route`, and the span's name `GET /classes/:classId`), the request id (`request.id`, set by
 * `logRequests`), and its URL as the logs keep it, secrets in the query and the calendar feed path replaced
 * (the instrumentation records the URL as received). The route is read here rather than by an Express
 * instrumentation, which cannot hook Express once Nest loads it as an ES module.
 */
export function completeRequestSpan(span: Span, request: unknown): void {
  if (!(request instanceof IncomingMessage)) return;
  const { id, originalUrl } = request as IncomingMessage & { id?: unknown; originalUrl?: string };
  const route = routeTemplate(request);
  if (route !== null) {
    span.setAttribute('http.route', route);
    span.updateName(`${request.method} ${route}`);
  }
  if (typeof id === 'string') span.setAttribute('http.request_id', id);
  const url = loggableUrl(originalUrl ?? request.url ?? '');
  const queryStart = url.indexOf('?');
  span.setAttribute('url.path', queryStart < 0 ? url : url.slice(0, queryStart));
  if (queryStart >= 0) span.setAttribute('url.query', url.slice(queryStart + 1));
}
