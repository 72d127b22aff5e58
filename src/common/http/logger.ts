import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Params } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AppConfig } from '../../config/config';
import { ErrorCode } from '../errors/app-error';

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

/** `token` query parameters (GET /auth/verify-token) are one-time e-mailed secrets, valid for an hour. */
const TOKEN_QUERY_PARAMETER = /([?&]token=)[^&#]*/g;

/** The URL as logs may keep it: the value of a `token` query parameter is replaced. */
export function loggableUrl(url: string): string {
  return url.includes('token=') ? url.replace(TOKEN_QUERY_PARAMETER, '$1[REDACTED]') : url;
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
          req: {
            id: request.id,
            method: request.method,
            url: loggableUrl(request.originalUrl ?? request.url!),
          },
          res: { statusCode: status },
          responseTime: Date.now() - started,
        },
        response.writableEnded ? 'request completed' : 'request aborted',
      );
    });
    next();
  };
}

/** HTTP parser errors Node answers with a status of its own: [status, reason, message, code]. */
type ClientErrorAnswer = [number, string, string, ErrorCode];
const CLIENT_ERROR_ANSWERS: Record<string, ClientErrorAnswer> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'Request headers too large',
    ErrorCode.VALIDATION_ERROR,
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [
    413,
    'Payload Too Large',
    'Chunk extensions too large',
    ErrorCode.PAYLOAD_TOO_LARGE,
  ],
};
const MALFORMED_REQUEST: ClientErrorAnswer = [
  400,
  'Bad Request',
  'Malformed HTTP request',
  ErrorCode.VALIDATION_ERROR,
];

/** A server socket; Node keeps the response in flight on it, if any, as `_httpMessage`. */
type ClientSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Requests Node's HTTP parser refuses (headers over its limit, malformed syntax) never reach Express; Node
 * answers them with an empty body and no request id. This answers them like every other error: a JSON
 * `{error, code}` body, `X-Request-Id`, and a log line.
 */
export function answerClientErrors(server: Server, logger: Pino): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ClientSocket) => {
    const parserError = error.code?.startsWith('HPE_') ?? false;
    // As Node does: answer unless a response on this connection has already begun (keep-alive included).
    const canAnswer = socket.writable && !socket._httpMessage?.headersSent;
    if (!parserError || !canAnswer) {
      // Node's own answer: 408 for a timeout, nothing for a reset.
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && canAnswer) {
        socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      }
      socket.destroy(error);
      return;
    }
    const [status, reason, message, code] = CLIENT_ERROR_ANSWERS[error.code!] ?? MALFORMED_REQUEST;
    const id = randomUUID();
    const body = JSON.stringify({ error: message, code });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
    logger.warn(
      { req: { id }, res: { statusCode: status }, err: error.code },
      'request refused by the HTTP parser',
    );
  });
}
