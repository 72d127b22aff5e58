import { Client } from 'pg';

/** pg's error for a query whose answer did not come within `query_timeout`. */
const READ_TIMEOUT = 'Query read timeout';

type Callback = (error: Error | null, result?: unknown) => void;
type QueryFn = (this: Client, ...args: unknown[]) => unknown;
/** Looked up at each call, so that whatever wraps pg's own `query` (instrumentation) still runs. */
const query = (client: Client, args: unknown[]): unknown =>
  (Client.prototype.query as QueryFn).apply(client, args);

function dropWhenLate(client: Client, error: unknown): void {
  if ((error as Error | null)?.message === READ_TIMEOUT) client.connection.stream.destroy();
}

/**
 * A pg client that drops its connection once an answer is late (`query_timeout`). pg only fails the query:
 * the connection stays busy waiting for that answer, so every later query on it fails the same way, and
 * TypeORM hands it back to the pool as healthy. Dropped, it leaves the pool (which hears its error) and the
 * next query opens a fresh connection.
 */
export class FailFastClient extends Client {}

FailFastClient.prototype.query = function (this: Client, ...args: unknown[]): unknown {
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    args[last] = (error: Error | null, result?: unknown) => {
      dropWhenLate(this, error);
      (callback as Callback)(error, result);
    };
    return query(this, args);
  }
  const result = query(this, args);
  if (!(result instanceof Promise)) return result;
  return result.catch((error: unknown) => {
    dropWhenLate(this, error);
    throw error;
  });
} as Client['query'];
