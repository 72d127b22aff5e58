import { QueryFailedError } from 'typeorm';

/**
 * What an unexpected failure says about its cause, which decides its answer and how it is logged:
 * - `database-unavailable`: the database cannot serve now (down, restarting, refusing connections, the network
 *   lost or silent): 503 with Retry-After, logged once per outage.
 * - `statement-timeout`: PostgreSQL cancelled a statement that ran past `statement_timeout`: the database
 *   answers, the statement is too slow: 500, logged with the statement.
 * - `storage-full`: no room left where the data goes (the file storage's disk, the database's): 507.
 */
export type FailureCause = 'database-unavailable' | 'statement-timeout' | 'storage-full';

/**
 * SQLSTATEs of a database that cannot serve now: class 08 (connection exception), 53300 too_many_connections,
 * 57P01-57P03 (shutting down, crashed, starting up).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|53300|57P0[1-3])$/;
/** 57014 query_canceled: sent only for `statement_timeout`, as the service cancels no statement itself. */
const STATEMENT_TIMEOUT_SQLSTATE = '57014';
/** 53100 disk_full. */
const DISK_FULL_SQLSTATE = '53100';
/**
 * A FATAL error ends the session: whatever its SQLSTATE (55000 "database is not currently accepting
 * connections", 3D000 a dropped database, 28P01 a changed password), no statement can run until it is fixed.
 */
const SESSION_ENDED_SEVERITY = 'FATAL';
/** 25P03: the session was ended for a transaction left idle too long, the service's own fault, not an outage. */
const IDLE_IN_TRANSACTION_SQLSTATE = '25P03';
/** Socket errors of opening a connection to a server that is down or unreachable. */
const CONNECT_ERRNO = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * Socket errors of a connection lost mid-way: a query's, or any naming the failed system call (`read
 * ECONNRESET`, as a pooled connection's do); the HTTP server's "aborted" of a client that left has the same
 * code but no `syscall`.
 */
const LOST_ERRNO = new Set(['ECONNRESET', 'EPIPE']);
/** pg's and pg-pool's own errors: connect timeout, lost connection, late answer, client unusable. */
const UNAVAILABLE_MESSAGE =
  /^(timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed)/;
/** No room on the disk, the account's disk quota, or the process's file size limit. */
const NO_ROOM_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
/** Wrappers (Error.cause) followed to the root cause; a bound against a cycle. */
const MAX_CAUSE_DEPTH = 5;

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  severity?: unknown;
  syscall?: unknown;
  cause?: unknown;
}

function causeOf(error: ErrorFields, depth: number, ofQuery: boolean): FailureCause | null {
  const code = typeof error.code === 'string' ? error.code : '';
  if (code === STATEMENT_TIMEOUT_SQLSTATE) return 'statement-timeout';
  if (code === DISK_FULL_SQLSTATE || NO_ROOM_ERRNO.has(code)) return 'storage-full';
  if (
    UNAVAILABLE_SQLSTATE.test(code) ||
    (error.severity === SESSION_ENDED_SEVERITY && code !== IDLE_IN_TRANSACTION_SQLSTATE) ||
    CONNECT_ERRNO.has(code) ||
    (LOST_ERRNO.has(code) && (ofQuery || typeof error.syscall === 'string')) ||
    UNAVAILABLE_MESSAGE.test(String(error.message))
  ) {
    return 'database-unavailable';
  }
  return depth < MAX_CAUSE_DEPTH ? failureCause(error.cause, depth + 1) : null;
}

/**
 * The one classification of failures by cause, used by the exception filter and by whatever meets a failure
 * outside a request (jobs, the delivery worker). Looks through a failed query to its driver error and through
 * wrappers (`Error.cause`) to what they wrap. Null for any other failure: a bug.
 */
export function failureCause(error: unknown, depth = 0): FailureCause | null {
  const ofQuery = error instanceof QueryFailedError;
  const cause: unknown = ofQuery ? error.driverError : error;
  if (!cause || typeof cause !== 'object') return null;
  return causeOf(cause, depth, ofQuery);
}

/** True when `error` says the database did not answer or cannot serve now. */
export const isDatabaseUnavailable = (error: unknown): boolean =>
  failureCause(error) === 'database-unavailable';
