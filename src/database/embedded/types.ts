import type { LoggerService } from '@nestjs/common';

export interface EmbeddedPostgresOptions {
  /** Holds the cluster (`pgdata/`) and how to reach it (`connection.json`). */
  dir: string;
  /**
   * Test clusters: no fsync, and the server stays in the caller's process group so that an interrupted
   * test run (Ctrl-C) takes it down too. A service cluster is stopped only by `stop()`.
   */
  ephemeral?: boolean;
  /**
   * When another live process already runs this cluster: fail (true), or use its server and leave it
   * running on `stop()` (false, the default).
   */
  exclusive?: boolean;
  logger?: LoggerService;
}

export interface EmbeddedPostgres {
  readonly port: number;
  /** Holds `pgdata/`: the `dir` given, or the folder root keeps it in when its account cannot reach `dir`. */
  readonly clusterDir: string;
  url(database: string): string;
  stop(): Promise<void>;
}

export interface Paths {
  /** Where the service keeps how to reach the cluster: `connection.json`, `owner.pid`. */
  dir: string;
  /** Holds the cluster and whatever its account must reach (binaries copy, initdb input); its working dir. */
  clusterDir: string;
  pgdata: string;
  connection: string;
  /** PID of the service process that started the server: tells an orphaned server from one in use. */
  owner: string;
  binDir: string;
}

/** The unprivileged account PostgreSQL runs as when the service runs as root. */
export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

export const STOP_TIMEOUT_MS = 30_000;
