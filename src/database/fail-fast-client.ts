import { channel } from 'node:diagnostics_channel';
import { Client, ClientConfig } from 'pg';
import { connectFailure, PoolObserver, statementFailure } from './connection-failures';
import { checkKeyedWrite } from './keyed-writes';

/** pg's error for a query whose answer did not come within `query_timeout`. */
const READ_TIMEOUT = 'Query read timeout';
/** The SQLSTATE of a statement the server cancelled: the service cancels none itself, statement_timeout does. */
const QUERY_CANCELED = '57014';

/**
 * The diagnostics channel (Node's `node:diagnostics_channel`) on which every statement of the app's
 * connections (TypeORM's pool and the export pool) is published as `{ text }` when it is sent, synchronously
 * in the sender's async context: for observers outside the service, such as the statement counts of the tests
 * and the bench, or an APM. Nothing is published while no one subscribes.
 */
export const STATEMENTS_CHANNEL = 'classroom-task-service:sql-statement';
const statements = channel(STATEMENTS_CHANNEL);

/** A statement as `query` takes it: its text, a config object with `text`, or a submittable (a cursor). */
const statementText = (config: unknown): string =>
  typeof config === 'string' ? config : String((config as { text?: unknown } | null)?.text);

type Callback = (error: Error | null, result?: unknown) => void;

/**
 * A pg client whose connection failures are ConnectionFailures (`connection-failures.ts`), and that drops its
 * connection once an answer is late (`query_timeout`). pg only fails the query:
 * the connection stays busy waiting for that answer, so every later query on it fails the same way, and
 * TypeORM hands it back to the pool as healthy. `end()` with a query still unanswered closes the socket at
 * once, and pg-pool removes an ended client when it is released instead of keeping it; the next query opens
 * a fresh connection. Every statement passes `checkKeyedWrite` first: a keyed request's write outside the
 * key's transaction is refused before it is sent.
 */
export class FailFastClient extends Client {
  private readonly observer: PoolObserver | undefined;

  /** `observer`: the pool's (`ObservedPoolConfig`), which pg-pool passes on with the rest of its settings. */
  constructor(config?: ClientConfig & { observer?: PoolObserver }) {
    super(config);
    this.observer = config?.observer;
  }

  // One implementation for all of pg's `query` overloads: like pg, it tells them apart by the arguments.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const text = statementText(args[0]);
    checkKeyedWrite(this, text);
    if (statements.hasSubscribers) statements.publish({ text });
    const last = args.length - 1;
    const callback: unknown = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: Error | null, result?: unknown) => {
        this.dropWhenLate(error);
        (callback as Callback)(error && (statementFailure(error) as Error), result);
      };
    }
    const result: unknown = (super.query as (...queryArgs: unknown[]) => unknown).apply(this, args);
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      this.dropWhenLate(error);
      throw statementFailure(error);
    });
  }

  /** Connects as pg does; a failure to connect is a ConnectionFailure (`connection-failures.ts`). */
  // One implementation for both of pg's `connect` forms (callback, promise), told apart by the argument.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(...args: any[]): any {
    const [callback] = args as unknown[];
    if (typeof callback === 'function') {
      return (super.connect as (callback: (error: Error | null) => void) => void)((error) =>
        (callback as (error: Error | null) => void)(error && (connectFailure(error) as Error)),
      );
    }
    return super.connect().catch((error: unknown) => {
      throw connectFailure(error);
    });
  }

  private dropWhenLate(error: unknown): void {
    const late = (error as Error | null)?.message === READ_TIMEOUT;
    if (late || (error as { code?: unknown } | null)?.code === QUERY_CANCELED)
      this.observer?.statementTimedOut();
    if (late) this.end().catch(() => undefined);
  }
}

/**
 * The client through a transaction-mode pooler (DATABASE_POOLER=transaction): each transaction may run on
 * another server connection, where a statement prepared by name on an earlier one does not exist (or was
 * prepared by another client). Statements named for the direct connection run unnamed here.
 */
export class TransactionPoolerClient extends FailFastClient {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const [config] = args as unknown[];
    if (isNamedQueryConfig(config)) args[0] = { ...config, name: undefined };
    return super.query(...(args as unknown[]));
  }
}

/** A plain query config object with a name (a Submittable such as a cursor is left alone). */
function isNamedQueryConfig(value: unknown): value is { name: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { submit?: unknown }).submit !== 'function'
  );
}
