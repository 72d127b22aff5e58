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
/** Socket errors of opening a connection to a server that is down or unreachable. */
const CONNECT_ERRNO = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** Socket errors of a connection lost mid-query: only a query's own count, as an aborted upload says them too. */
const LOST_ERRNO = new Set(['ECONNRESET', 'EPIPE']);
/** pg's and pg-pool's own errors: connect timeout, lost connection, late answer, client unusable. */
const UNAVAILABLE_MESSAGE =
  /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed)/;

/** True when `error` (or the driver error of a failed query) says the database did not answer. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const driverError = error instanceof QueryFailedError ? (error.driverError as unknown) : undefined;
  const cause = (driverError ?? error) as { code?: unknown; message?: unknown } | null;
  if (!cause || typeof cause !== 'object') return false;
  const code = typeof cause.code === 'string' ? cause.code : '';
  return (
    UNAVAILABLE_SQLSTATE.test(code) ||
    CONNECT_ERRNO.has(code) ||
    (driverError !== undefined && LOST_ERRNO.has(code)) ||
    UNAVAILABLE_MESSAGE.test(String(cause.message))
  );
}
