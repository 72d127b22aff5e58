export interface PgBouncerOptions {
  /** Server connections per database and user (`default_pool_size`, default 20). */
  poolSize?: number;
  /** How long a client waits for a server connection before PgBouncer fails its query (default 30). */
  queryWaitTimeoutSeconds?: number;
  /** More `[pgbouncer]` settings. */
  settings?: Record<string, string | number>;
}

export interface PgBouncer {
  port: number;
  /** `url` (a URL of the server PgBouncer points at) with PgBouncer's host and port instead. */
  pooled(url: string): string;
  close(): Promise<void>;
}

export function startPgBouncer(serverUrl: string, options?: PgBouncerOptions): Promise<PgBouncer>;
