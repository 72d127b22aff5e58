import { HttpStatus } from '@nestjs/common';

/** Every machine-readable error code the API answers with. */
export enum ErrorCode {
  UNAUTHORIZED = 'UNAUTHORIZED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  CONFLICT = 'CONFLICT',
  /** `If-Match` with a stale tag. */
  PRECONDITION_FAILED = 'PRECONDITION_FAILED',
  /** An `Idempotency-Key` reused for another request. */
  IDEMPOTENCY_KEY_REUSED = 'IDEMPOTENCY_KEY_REUSED',
  /**
   * A repeat of an `Idempotency-Key` whose request was carried out but whose answer is not kept (it carried
   * credentials, or the instance stopped between the commit and the answer); not named by the specification.
   */
  IDEMPOTENCY_ANSWER_NOT_KEPT = 'IDEMPOTENCY_ANSWER_NOT_KEPT',
  VALIDATION_ERROR = 'VALIDATION_ERROR',
  INVALID_TOKEN = 'INVALID_TOKEN',
  CAPTCHA_REQUIRED = 'CAPTCHA_REQUIRED',
  INVALID_CREDENTIALS = 'INVALID_CREDENTIALS',
  ACCOUNT_DEACTIVATED = 'ACCOUNT_DEACTIVATED',
  REGISTRATION_CLOSED = 'REGISTRATION_CLOSED',
  CAPTCHA_FAILED = 'CAPTCHA_FAILED',
  LATE_SUBMISSION_CLOSED = 'LATE_SUBMISSION_CLOSED',
  TASK_LOCKED = 'TASK_LOCKED',
  QUOTA_EXCEEDED = 'QUOTA_EXCEEDED',
  /** A rubric change that would remove or re-point a criterion or level an assessment uses. */
  RUBRIC_IN_USE = 'RUBRIC_IN_USE',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  RATE_LIMITED = 'RATE_LIMITED',
  INTERNAL_ERROR = 'INTERNAL_ERROR',
  CAPTCHA_UNAVAILABLE = 'CAPTCHA_UNAVAILABLE',
  /** The client did not send its request within the HTTP timeouts; not named by the specification. */
  REQUEST_TIMEOUT = 'REQUEST_TIMEOUT',
  /** Readiness check failed (GET /health); not named by the specification. */
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
  /** The file storage (disk or S3 bucket) failed or did not answer; not named by the specification. */
  STORAGE_UNAVAILABLE = 'STORAGE_UNAVAILABLE',
  /** No room left to store the write (the file storage's disk is full); not named by the specification. */
  INSUFFICIENT_STORAGE = 'INSUFFICIENT_STORAGE',
}

/** Exhaustive: adding a code without a status fails to compile. */
export const ERROR_STATUS: Record<ErrorCode, HttpStatus> = {
  [ErrorCode.UNAUTHORIZED]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.FORBIDDEN]: HttpStatus.FORBIDDEN,
  [ErrorCode.NOT_FOUND]: HttpStatus.NOT_FOUND,
  [ErrorCode.CONFLICT]: HttpStatus.CONFLICT,
  [ErrorCode.PRECONDITION_FAILED]: HttpStatus.PRECONDITION_FAILED,
  [ErrorCode.IDEMPOTENCY_KEY_REUSED]: HttpStatus.UNPROCESSABLE_ENTITY,
  [ErrorCode.IDEMPOTENCY_ANSWER_NOT_KEPT]: HttpStatus.CONFLICT,
  [ErrorCode.VALIDATION_ERROR]: HttpStatus.BAD_REQUEST,
  [ErrorCode.INVALID_TOKEN]: HttpStatus.BAD_REQUEST,
  [ErrorCode.CAPTCHA_REQUIRED]: HttpStatus.BAD_REQUEST,
  [ErrorCode.INVALID_CREDENTIALS]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.ACCOUNT_DEACTIVATED]: HttpStatus.FORBIDDEN,
  [ErrorCode.REGISTRATION_CLOSED]: HttpStatus.FORBIDDEN,
  [ErrorCode.CAPTCHA_FAILED]: HttpStatus.FORBIDDEN,
  [ErrorCode.LATE_SUBMISSION_CLOSED]: HttpStatus.FORBIDDEN,
  [ErrorCode.TASK_LOCKED]: HttpStatus.FORBIDDEN,
  [ErrorCode.QUOTA_EXCEEDED]: HttpStatus.FORBIDDEN,
  [ErrorCode.RUBRIC_IN_USE]: HttpStatus.CONFLICT,
  [ErrorCode.PAYLOAD_TOO_LARGE]: HttpStatus.PAYLOAD_TOO_LARGE,
  [ErrorCode.RATE_LIMITED]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.INTERNAL_ERROR]: HttpStatus.INTERNAL_SERVER_ERROR,
  [ErrorCode.CAPTCHA_UNAVAILABLE]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.REQUEST_TIMEOUT]: HttpStatus.REQUEST_TIMEOUT,
  [ErrorCode.SERVICE_UNAVAILABLE]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.STORAGE_UNAVAILABLE]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.INSUFFICIENT_STORAGE]: HttpStatus.INSUFFICIENT_STORAGE,
};

/** A domain error: services throw it, the global filter maps it to `{error, code}` and the status above. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): HttpStatus {
    return ERROR_STATUS[this.code];
  }

  static notFound(what = 'Resource'): AppError {
    return new AppError(ErrorCode.NOT_FOUND, `${what} not found`);
  }

  static forbidden(message = 'Insufficient permission'): AppError {
    return new AppError(ErrorCode.FORBIDDEN, message);
  }

  static conflict(message: string): AppError {
    return new AppError(ErrorCode.CONFLICT, message);
  }

  static validation(message: string): AppError {
    return new AppError(ErrorCode.VALIDATION_ERROR, message);
  }

  static unauthorized(message = 'Missing or invalid token'): AppError {
    return new AppError(ErrorCode.UNAUTHORIZED, message);
  }

  static rateLimited(retryAfterSeconds: number): AppError {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return new AppError(ErrorCode.RATE_LIMITED, 'Too many requests, try again later', {
      'Retry-After': String(seconds),
    });
  }
}
