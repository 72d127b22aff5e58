import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { DATABASE_RETRY_AFTER_SECONDS, DatabaseOutage } from './database-outage';
import { loggableUrl } from '../http/logger';
import { pgErrorCode } from '../utils/pg-errors';
import { AppError, ErrorCode } from './app-error';
import { failureCause } from './failure-cause';

interface ErrorBody {
  error: string;
  code: ErrorCode;
}

/** Status → code for framework errors (404 route, 413 body, 400 bad JSON, ...). */
const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: ErrorCode.VALIDATION_ERROR,
  [HttpStatus.UNAUTHORIZED]: ErrorCode.UNAUTHORIZED,
  [HttpStatus.FORBIDDEN]: ErrorCode.FORBIDDEN,
  [HttpStatus.NOT_FOUND]: ErrorCode.NOT_FOUND,
  [HttpStatus.METHOD_NOT_ALLOWED]: ErrorCode.NOT_FOUND,
  [HttpStatus.CONFLICT]: ErrorCode.CONFLICT,
  [HttpStatus.PAYLOAD_TOO_LARGE]: ErrorCode.PAYLOAD_TOO_LARGE,
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: ErrorCode.VALIDATION_ERROR,
  [HttpStatus.TOO_MANY_REQUESTS]: ErrorCode.RATE_LIMITED,
};

/** Errors raised by body-parser / multer before Nest sees the request carry `status` or `code`. */
interface LowLevelError {
  status?: number;
  statusCode?: number;
  type?: string;
  code?: string;
  /** Set by http-errors (body-parser's errors): the message is safe to show the client. */
  expose?: boolean;
  message?: string;
}

const MULTER_TOO_LARGE = 'LIMIT_FILE_SIZE';
/** SQLSTATE 22021, e.g. "invalid byte sequence for encoding UTF8: 0x00". */
const PG_INVALID_BYTE_SEQUENCE = '22021';

/** While the storage stays full, how often it is said again in the log. */
const STORAGE_FULL_WARNING_INTERVAL_MS = 60_000;

/** The connection closed before the request was read to its end. */
function clientLeft(request: Request): boolean {
  return !request.complete && (request.destroyed || request.socket?.destroyed === true);
}

/**
 * Nest 12's Express adapter hands over the body parser's errors (http-errors, with `expose`) wrapped in an
 * HttpException of their own status; unwrapped, they are answered as before (400 for an unreadable body, 413
 * for a large one), not as that status.
 */
function unwrapBodyParserError(exception: unknown): unknown {
  const cause = exception instanceof HttpException ? exception.cause : undefined;
  return cause instanceof Error && typeof (cause as LowLevelError).expose === 'boolean' ? cause : exception;
}

/**
 * The one place where errors become HTTP answers: `{error, code}` and nothing else.
 * Unexpected errors are logged with the request id and answered as 500 INTERNAL_ERROR.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');
  private storageFullWarnedAt = -Infinity;

  constructor(
    private readonly outage: DatabaseOutage,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    if (clientLeft(request)) {
      // Whatever failed was reading a request the client gave up on (a cut upload: "Request aborted" from
      // multer, "request aborted" from the body parser): nobody to answer, and no fault of the service.
      // logRequests writes its line, "request aborted" at info.
      response.destroy();
      return;
    }
    const { status, body, headers } = this.toResponse(unwrapBodyParserError(exception), request);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    // Through the adapter, like a route's answer: an observer of the answer (a kept Idempotency-Key) sees it.
    this.adapterHost.httpAdapter.reply(response, body, status);
  }

  private toResponse(
    exception: unknown,
    request: Request,
  ): { status: number; body: ErrorBody; headers: Record<string, string> } {
    if (exception instanceof AppError) {
      return {
        status: exception.status,
        body: { error: exception.message, code: exception.code },
        headers: exception.headers,
      };
    }
    if (exception instanceof ThrottlerException) {
      return {
        status: 429,
        body: { error: 'Too many requests, try again later', code: ErrorCode.RATE_LIMITED },
        headers: {},
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = CODE_BY_STATUS[status];
      if (code) return { status, body: { error: this.messageOf(exception, status), code }, headers: {} };
    }
    if (pgErrorCode(exception) === PG_INVALID_BYTE_SEQUENCE) {
      // Only request text can carry a NUL character, which PostgreSQL text cannot hold: bad input, not a bug.
      return {
        status: 400,
        body: { error: 'Text must not contain NUL characters', code: ErrorCode.VALIDATION_ERROR },
        headers: {},
      };
    }
    const lowLevel = exception as LowLevelError | null;
    if (lowLevel && typeof lowLevel === 'object') {
      if (lowLevel.code === MULTER_TOO_LARGE || lowLevel.type === 'entity.too.large') {
        return {
          status: 413,
          body: { error: 'Payload too large', code: ErrorCode.PAYLOAD_TOO_LARGE },
          headers: {},
        };
      }
      const status = lowLevel.status ?? lowLevel.statusCode;
      if (status === 400 && lowLevel.type === 'entity.parse.failed') {
        return {
          status: 400,
          body: { error: 'Malformed JSON body', code: ErrorCode.VALIDATION_ERROR },
          headers: {},
        };
      }
      // The body parser's other refusals (a charset or content encoding it cannot read, a body that does not
      // decompress or is shorter than its Content-Length) are bad input too, not a failure of the service.
      if (lowLevel.expose === true && status !== undefined && status >= 400 && status < 500) {
        const error = `Unreadable request body: ${lowLevel.message ?? 'invalid encoding'}`;
        return { status: 400, body: { error, code: ErrorCode.VALIDATION_ERROR }, headers: {} };
      }
    }
    const cause = failureCause(exception);
    if (cause === 'database-unavailable') {
      this.outage.report(exception);
      return {
        status: 503,
        body: { error: 'Database unavailable, try again later', code: ErrorCode.SERVICE_UNAVAILABLE },
        headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      };
    }
    if (cause === 'storage-full') {
      this.reportStorageFull(exception);
      return {
        status: 507,
        body: { error: 'Not enough storage left, nothing was stored', code: ErrorCode.INSUFFICIENT_STORAGE },
        headers: {},
      };
    }
    // A statement past `statement_timeout` is a slow statement, not an outage: logged with its text (its
    // bound values are redacted from the log, they may hold secrets) so that it can be found and fixed.
    const statement =
      cause === 'statement-timeout' ? { statement: (exception as { query?: string }).query } : {};
    this.logger.error(
      {
        err: exception,
        ...statement,
        requestId: request.id,
        method: request.method,
        url: loggableUrl(request.originalUrl),
      },
      cause === 'statement-timeout' ? 'Statement timed out' : 'Unhandled error',
    );
    return {
      status: 500,
      body: { error: 'Internal server error', code: ErrorCode.INTERNAL_ERROR },
      headers: {},
    };
  }

  /** One warning, then at most one a minute while writes keep failing for want of room. */
  private reportStorageFull(exception: unknown): void {
    const now = Date.now();
    if (now - this.storageFullWarnedAt < STORAGE_FULL_WARNING_INTERVAL_MS) return;
    this.storageFullWarnedAt = now;
    const { message, code } = exception as { message?: string; code?: string };
    this.logger.warn(
      { reason: message, code },
      'No room left to store writes: they answer 507 INSUFFICIENT_STORAGE until space is freed',
    );
  }

  private messageOf(exception: HttpException, status: HttpStatus): string {
    const response = exception.getResponse();
    if (status === HttpStatus.NOT_FOUND && /^Cannot (GET|POST|PUT|PATCH|DELETE)/.test(exception.message)) {
      return 'Route not found';
    }
    if (typeof response === 'string') return response;
    const message = (response as { message?: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string') return message;
    return exception.message;
  }
}
