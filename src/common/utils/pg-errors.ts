import { QueryFailedError } from 'typeorm';

/** PostgreSQL SQLSTATE of a failed query, e.g. 23505 unique_violation. */
export function pgErrorCode(error: unknown): string | undefined {
  if (error instanceof QueryFailedError) return (error.driverError as { code?: string }).code;
  return (error as { code?: string } | null)?.code;
}

export function pgConstraint(error: unknown): string | undefined {
  if (error instanceof QueryFailedError) return (error.driverError as { constraint?: string }).constraint;
  return (error as { constraint?: string } | null)?.constraint;
}

export const isUniqueViolation = (error: unknown): boolean => pgErrorCode(error) === '23505';

/**
 * SQLSTATEs of a database that cannot serve now: class 08 (connection exception), 53300 too_many_connections,
 * 57014 query_canceled (statement_timeout), 57P01-57P03 (shutting down, crashed, starting up).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|53300|57014|57P0[1-3])$/;
/** Socket errors of a connection to a server that is down or unreachable. */
const UNAVAILABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
/** pg's and pg-pool's own errors: connect timeout, lost connection, late answer, client unusable. */
const UNAVAILABLE_MESSAGE =
  /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed)/;

/** True when `error` (or what it wraps) says the database did not answer, rather than refusing a statement. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && typeof cause === 'object' && depth < 5; depth += 1) {
    const code = pgErrorCode(cause);
    if (code && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
    if (UNAVAILABLE_MESSAGE.test(String((cause as { message?: unknown }).message))) return true;
    cause = cause instanceof QueryFailedError ? cause.driverError : (cause as { cause?: unknown }).cause;
  }
  return false;
}
