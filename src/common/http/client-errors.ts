import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode } from '../errors/app-error';

/** What Node answers for each parser error, with the code of the API's error body. */
function answerFor(code: string | undefined): { status: number; error: string; code: ErrorCode } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, error: 'Request headers too large', code: ErrorCode.VALIDATION_ERROR };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, error: 'Payload too large', code: ErrorCode.PAYLOAD_TOO_LARGE };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: 'Request not received in time', code: ErrorCode.VALIDATION_ERROR };
    default:
      return { status: 400, error: 'Malformed HTTP request', code: ErrorCode.VALIDATION_ERROR };
  }
}

/**
 * Requests Node's HTTP parser refuses (headers over its limit, a malformed request line) never reach Express;
 * Node's own answer has no body. This one answers as the rest of the API does: `{error, code}` and an
 * X-Request-Id. Same conditions as Node's default handler: nothing is written to a closed socket or after a
 * response on it started.
 */
export function answerClientErrorsAsJson(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, ...answer } = answerFor(error.code);
    const body = JSON.stringify(answer);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
