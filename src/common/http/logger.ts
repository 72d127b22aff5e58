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

/**
 * Query parameters that are credentials: `token` (GET /auth/verify-token, one-time e-mailed secrets, valid for
 * an hour) and `signature` (signed file URLs, GET /files/:fileKey/content).
 */
const SECRET_QUERY_PARAMETER = /([?&](?:token|signature)=)[^&#]*/g;

/** The URL as logs may keep it: the values of secret query parameters are replaced. */
export function loggableUrl(url: string): string {
  return url.includes('=') ? url.replace(SECRET_QUERY_PARAMETER, '$1[REDACTED]') : url;
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
): (request: IncomingMessage, response: ServerResponse, next: () => void) => void {
  return (incoming, response, next) => {
    const request = incoming as LoggedRequest;
    const started = Date.now();
    request.id = requestId(request, response);
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
        },
        aborted ? 'request aborted' : 'request completed',
      );
    });
    next();
  };
}

const REQUEST_TIMEOUT = 'ERR_HTTP_REQUEST_TIMEOUT';
/** The client closed its side of the connection in the middle of a request: it left, nobody to answer. */
const CLIENT_LEFT = 'HPE_INVALID_EOF_STATE';

/** Errors of Node's HTTP server it answers with a status of its own: [status, reason, message, code]. */
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
  [REQUEST_TIMEOUT]: [
    408,
    'Request Timeout',
    'The request was not received in time',
    ErrorCode.REQUEST_TIMEOUT,
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
 * Requests Node's HTTP server refuses (headers over its limit, malformed syntax, headers or body not received
 * within the timeouts) are answered by Node with an empty body and no request id. This answers them like
 * every other error: a JSON `{error, code}` body, `X-Request-Id`, `Connection: close`, and a log line. Resets
 * and clients that closed their side mid-request get no answer (Node answered the latter with 400).
 */
export function answerClientErrors(server: Server, logger: Pino): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ClientSocket) => {
    const code = error.code ?? '';
    const answer =
      CLIENT_ERROR_ANSWERS[code] ??
      (code.startsWith('HPE_') && code !== CLIENT_LEFT ? MALFORMED_REQUEST : null);
    const inFlight = socket._httpMessage;
    // As Node does: answer unless a response on this connection has already begun (keep-alive included).
    if (!answer || !socket.writable || inFlight?.headersSent) {
      socket.destroy(error);
      return;
    }
    const [status, reason, message, errorCode] = answer;
    const body = JSON.stringify({ error: message, code: errorCode });
    if (inFlight) {
      // A request already in the application (its body came too slowly): answered on its own response, so the
      // answer carries the request's id and logRequests writes its line.
      inFlight.statusCode = status;
      inFlight.setHeader('Content-Type', 'application/json; charset=utf-8');
      inFlight.setHeader('Content-Length', Buffer.byteLength(body));
      inFlight.setHeader('Connection', 'close');
      inFlight.end(body, () => socket.destroy());
      return;
    }
    const id = randomUUID();
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
    logger.warn(
      { req: { id }, res: { statusCode: status }, err: code },
      code === REQUEST_TIMEOUT
        ? 'request headers not received in time'
        : 'request refused by the HTTP parser',
    );
  });
}

/**
 * Node's limits for slow clients. Node looks for connections past them every `connectionsCheckingInterval`
 * (30 s by default, read when the server starts listening): a tenth of the shorter limit, at most a second,
 * keeps a timeout within about a second of its value.
 */
export function applyServerTimeouts(
  server: Server & { connectionsCheckingInterval?: number },
  limits: AppConfig['http'],
): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.connectionsCheckingInterval = Math.max(
    10,
    Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)),
  );
}
