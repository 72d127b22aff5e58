import type { Request, Response } from 'express';
import { routeTemplate } from '../http/route-template';
import { Metrics } from './metrics';

/** The route label of a request no route matched (404s, static files): never its URL, which may hold ids. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every request into `http_request_duration_seconds` by method, route template (`/classes/:id`, as
 * Nest registered it with Express) and status. Mounted first, like the request log, so refused bodies and
 * unknown routes count too; only while the metrics are served.
 */
export function recordRequests(
  metrics: Metrics,
): (request: Request, response: Response, next: () => void) => void {
  const histogram = metrics.httpRequestDuration;
  return (request, response, next) => {
    const started = performance.now();
    response.once('close', () => {
      histogram.observe(
        {
          method: request.method,
          route: routeTemplate(request) ?? UNMATCHED_ROUTE,
          status: response.statusCode,
        },
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
}
