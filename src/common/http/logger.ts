import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AppConfig } from '../../config/config';
import { traceFields, traceIdField } from '../tracing/spans';

const REQUEST_ID_HEADER = 'x-request-id';
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes the caller's X-Request-Id when it is sane, else makes one; echoes it on the response. */
export function requestId(request: IncomingMessage, response: ServerResponse): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/**
 * Structured JSON logs; secrets redacted. The options of the process's one pino logger. With tracing on, each
 * line written within a span carries its `trace_id` and `span_id`.
 */
export function loggerOptions(config: Pick<AppConfig, 'logLevel' | 'tracing'>): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      ...(config.tracing.endpoint ? { mixin: traceFields } : {}),
      redact: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        // A failed TypeORM query carries its bound values: password hashes, webhook secrets, token hashes,
        // submission texts. The query text stays, which is what a failure is diagnosed by.
        'err.parameters',
      ],
    },
  };
}

/**
 * Query parameters that are credentials: `token` (GET /auth/verify-token, one-time e-mailed secrets, valid for
 * an hour), `signature` (signed file URLs, GET /files/:fileKey/content) and `ticket` (opens a live
 * inbox stream, GET /users/me/notifications/stream).
 */
const SECRET_QUERY_PARAMETER = /([?&](?:token|signature|ticket)=)[^&#]*/g;

/** A calendar feed address (GET /calendar/<token>.ics): the path is the secret. */
const CALENDAR_FEED_PATH = /^(\/calendar\/)[^/?#]+(\.ics)/;

/** The URL as logs may keep it: secrets in query parameters and calendar feed paths are replaced. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMETER, '$1[REDACTED]').replace(CALENDAR_FEED_PATH, '$1[REDACTED]$2');
}

interface LoggedRequest extends IncomingMessage {
  id: string;
  originalUrl?: string;
}

/**
 * Gives every request its id (X-Request-Id, `request.id`) and writes one line when its response ends: info,
 * warn for 4xx, error for 5xx; "request aborted" at info when the connection closed first (the client's
 * doing, whatever status an answer that never left had). Mounted first, so body
 * parser errors and unknown routes are logged too. A plain listener instead of pino-http under nestjs-pino:
 * those built a child logger per request and ran every request in an AsyncLocalStorage context, whose
 * promise hooks cost every await; together about half of the CPU time of a request that does no I/O.
 */
export function logRequests(
  logger: Pino,
  { traced = false }: { traced?: boolean } = {},
): (request: IncomingMessage, response: ServerResponse, next: () => void) => void {
  return (incoming, response, next) => {
    const request = incoming as LoggedRequest;
    const started = Date.now();
    request.id = requestId(request, response);
    // The request's span, taken now: the response's 'close' may be emitted outside it.
    const trace = traced ? traceIdField() : {};
    response.once('close', () => {
      const status = response.statusCode;
      const aborted = !response.writableEnded;
      const level = aborted ? 'info' : status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      logger[level](
        {
          req: {
            id: request.id,
            method: request.method,
            url: loggableUrl(request.originalUrl ?? request.url!),
          },
          res: { statusCode: status },
          responseTime: Date.now() - started,
          ...trace,
        },
        aborted ? 'request aborted' : 'request completed',
      );
    });
    next();
  };
}
