import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger as Pino } from 'pino';
import { AppConfig } from '../../config/config';
import { ErrorCode } from '../errors/app-error';

/*
 * Slow and broken clients: the answers Node's HTTP server gives a request it refuses or that timed out, and
 * its limits for slow clients.
 */

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

/**
 * Requests Node's HTTP server refuses (headers over its limit, malformed syntax, headers or body not received
 * within the timeouts) are answered by Node with an empty body and no request id. This answers them like
 * every other error: a JSON `{error, code}` body, `X-Request-Id`, `Connection: close`, and a log line. Resets
 * and clients that closed their side mid-request get no answer (Node answered the latter with 400).
 */
export function answerClientErrors(server: Server, logger: Pino): void {
  const inFlightOn = responsesInFlight(server);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const code = error.code ?? '';
    const answer =
      CLIENT_ERROR_ANSWERS[code] ??
      (code.startsWith('HPE_') && code !== CLIENT_LEFT ? MALFORMED_REQUEST : null);
    const inFlight = inFlightOn.get(socket);
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

/** The response each connection of `server` is answering, while it is. */
function responsesInFlight(server: Server): WeakMap<Socket, ServerResponse> {
  const responses = new WeakMap<Socket, ServerResponse>();
  server.on('request', ({ socket }: IncomingMessage, response: ServerResponse) => {
    responses.set(socket, response);
    const done = () => {
      if (responses.get(socket) === response) responses.delete(socket);
    };
    response.once('finish', done).once('close', done);
  });
  return responses;
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
