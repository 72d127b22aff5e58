import { DatabaseError } from 'pg';
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
/** No room on the disk, the account's disk quota, or the process's file size limit. */
const NO_ROOM_ERRNO = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
/** Wrappers (Error.cause) followed to the root cause; a bound against a cycle. */
const MAX_CAUSE_DEPTH = 5;

/**
 * What the database said, by its SQLSTATE and severity. Only pg's typed error counts: the server's answers,
 * and the connection failures the database's client and pools raise as such at their boundary
 * (`database/connection-failures.ts`: class 08). A socket code or a message of any other origin (a mail
 * server, S3, a webhook) says nothing about the database.
 */
function causeOfDatabaseError(error: DatabaseError): FailureCause | null {
  const code = error.code ?? '';
  if (code === STATEMENT_TIMEOUT_SQLSTATE) return 'statement-timeout';
  if (code === DISK_FULL_SQLSTATE) return 'storage-full';
  if (
    UNAVAILABLE_SQLSTATE.test(code) ||
    (error.severity === SESSION_ENDED_SEVERITY && code !== IDLE_IN_TRANSACTION_SQLSTATE)
  ) {
    return 'database-unavailable';
  }
  return null;
}

/**
 * The one classification of failures by cause, used by the exception filter and by whatever meets a failure
 * outside a request (jobs, the delivery worker). Looks through a failed query to its driver error and through
 * wrappers (`Error.cause`) to what they wrap. Null for any other failure: a bug.
 */
export function failureCause(error: unknown, depth = 0): FailureCause | null {
  const cause: unknown = error instanceof QueryFailedError ? error.driverError : error;
  if (!cause || typeof cause !== 'object') return null;
  if (cause instanceof DatabaseError) return causeOfDatabaseError(cause);
  // Whatever the origin: the file storage's disk as much as the database's.
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' && NO_ROOM_ERRNO.has(code)) return 'storage-full';
  return depth < MAX_CAUSE_DEPTH ? failureCause((cause as { cause?: unknown }).cause, depth + 1) : null;
}

/** True when `error` says the database did not answer or cannot serve now. */
export const isDatabaseUnavailable = (error: unknown): boolean =>
  failureCause(error) === 'database-unavailable';
