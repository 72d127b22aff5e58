import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AppConfig } from '../../config/config';

const REQUEST_ID_HEADER = 'x-request-id';
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes the caller's X-Request-Id when it is sane, else makes one; echoes it on the response. */
export function requestId(request: IncomingMessage, response: ServerResponse): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/** Structured JSON logs; secrets redacted. The options of the process's one pino logger. */
export function loggerOptions(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
    },
  };
}

interface LoggedRequest extends IncomingMessage {
  id: string;
  originalUrl?: string;
}

/**
 * Gives every request its id (X-Request-Id, `request.id`) and writes one line when its response ends: info,
 * warn for 4xx, error for 5xx; "request aborted" when the connection closed first. Mounted first, so body
 * parser errors and unknown routes are logged too. A plain listener instead of pino-http under nestjs-pino:
 * those built a child logger per request and ran every request in an AsyncLocalStorage context, whose
 * promise hooks cost every await; together about half of the CPU time of a request that does no I/O.
 */
export function logRequests(
  logger: Pino,
): (request: IncomingMessage, response: ServerResponse, next: () => void) => void {
  return (incoming, response, next) => {
    const request = incoming as LoggedRequest;
    const started = Date.now();
    request.id = requestId(request, response);
    response.once('close', () => {
      const status = response.statusCode;
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      logger[level](
        {
          req: { id: request.id, method: request.method, url: request.originalUrl ?? request.url },
          res: { statusCode: status },
          responseTime: Date.now() - started,
        },
        response.writableEnded ? 'request completed' : 'request aborted',
      );
    });
    next();
  };
}
