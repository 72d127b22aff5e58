import { DatabaseError, Pool, PoolClient, PoolConfig } from 'pg';

/**
 * SQLSTATEs of the connection exceptions a client raises itself (class 08, as JDBC drivers do): a connection
 * that could not be made, and one lost, silent or unusable once made.
 */
export const UNABLE_TO_CONNECT_SQLSTATE = '08001';
export const CONNECTION_FAILURE_SQLSTATE = '08006';

/**
 * pg's own errors of a connection lost (its socket ended or failed), silent past `query_timeout`, or unusable
 * after either. pg gives them no code, only these texts, so test/platform/driver-errors.e2e-spec.ts provokes
 * each through the real driver: a release that rewords one fails that test instead of turning outages
 * into 500s.
 */
const LOST_CONNECTION_MESSAGE =
  /^(Connection terminated|Query read timeout$|Client has encountered a connection error and is not queryable$|Client was closed and is not queryable$)/;
/** pg-pool's error for a connection the pool could not hand out within `connectionTimeoutMillis`. */
const POOL_WAIT_TIMEOUT_MESSAGE = /^timeout exceeded when trying to connect$/;

/**
 * A failure of the connection to the database, raised at the boundary where it is known to come from the
 * database's client or pool: pg's typed error with a class 08 SQLSTATE, the driver's own error as `cause`.
 * The rest of the service classifies database failures by the driver's type and SQLSTATE alone, so an error
 * of another origin (a mail server, S3, a webhook) with the same socket code is never taken for one.
 */
export class ConnectionFailure extends DatabaseError {
  constructor(sqlState: string, driverError: Error) {
    super(driverError.message, 0, 'error');
    this.code = sqlState;
    this.cause = driverError;
  }
}

/**
 * An error object, told by its shape: Node's own socket errors come from outside the realm of a module run in
 * a VM context (as Jest runs them), where `instanceof Error` is false for them.
 */
const isErrorObject = (error: unknown): error is Error =>
  typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string';

/** A Node system error (socket, DNS): it names the failed system call. */
const isSystemError = (error: Error): boolean => typeof (error as { syscall?: unknown }).syscall === 'string';

/** `error` of opening a connection: any failure but the server's own typed answer means it could not be made. */
export function connectFailure(error: unknown): unknown {
  if (!isErrorObject(error) || error instanceof DatabaseError) return error;
  return new ConnectionFailure(UNABLE_TO_CONNECT_SQLSTATE, error);
}

/** `error` of a statement: a lost, silent or unusable connection becomes a ConnectionFailure, the rest as is. */
export function statementFailure(error: unknown): unknown {
  if (!isErrorObject(error) || error instanceof DatabaseError) return error;
  if (isSystemError(error) || LOST_CONNECTION_MESSAGE.test(error.message)) {
    return new ConnectionFailure(CONNECTION_FAILURE_SQLSTATE, error);
  }
  return error;
}

/**
 * `error` of taking a connection from a pool: the pool's own wait timeout becomes a ConnectionFailure; a
 * client's failure to connect already is one (pg-pool may wrap it, as `cause`, in an error naming its timeout).
 */
function poolFailure(error: unknown): unknown {
  return isErrorObject(error) && POOL_WAIT_TIMEOUT_MESSAGE.test(error.message)
    ? new ConnectionFailure(UNABLE_TO_CONNECT_SQLSTATE, error)
    : error;
}

type PoolCallback = (error: Error | undefined, ...rest: unknown[]) => void;

/** What a pool tells the metrics (`Metrics.poolObserver`): itself, to be read per scrape, and its timeouts. */
export interface PoolObserver {
  opened(pool: Pool): void;
  connectFailed(): void;
  statementTimedOut(): void;
}

/** A pool's settings with its observer; pg-pool passes them on to each client it makes (`FailFastClient`). */
export interface ObservedPoolConfig extends PoolConfig {
  observer?: PoolObserver;
}

/**
 * pg's pool whose failures to hand out a connection are ConnectionFailures (the pools of TypeORM and exports),
 * each counted by its observer.
 */
export class DatabasePool extends Pool {
  private readonly observer: PoolObserver | undefined;

  constructor(config: ObservedPoolConfig = {}) {
    super(config);
    this.observer = config.observer;
    this.observer?.opened(this);
  }

  override connect(): Promise<PoolClient>;
  override connect(
    callback: (
      error: Error | undefined,
      client: PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  // One implementation for both of pg-pool's `connect` forms (callback, promise): like pg-pool, it tells them
  // apart by the argument.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(...args: any[]): any {
    const [callback] = args as unknown[];
    if (typeof callback === 'function') {
      return (super.connect as (callback: PoolCallback) => void)((error, ...rest) =>
        (callback as PoolCallback)(error && (this.failure(error) as Error), ...rest),
      );
    }
    return super.connect().catch((error: unknown) => {
      throw this.failure(error);
    });
  }

  private failure(error: unknown): unknown {
    const failure = poolFailure(error);
    if (failure instanceof ConnectionFailure) this.observer?.connectFailed();
    return failure;
  }
}
