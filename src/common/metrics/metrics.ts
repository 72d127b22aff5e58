import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pool } from 'pg';
import { AppConfig } from '../../config/config';
import { inSpan } from '../tracing/spans';

/** Seconds: from a fast cached read to the slowest answer the statement timeout allows, and beyond. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: job runs go from milliseconds (nothing to do) to minutes (a large fan-out). */
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

/** The outcome of a delivery attempt as the outbox records it. */
export type DeliveryOutcome = 'sent' | 'retry' | 'failed';

/**
 * The instance's Prometheus metrics (docs/operations.md, "Metrics", says what each means). One registry per
 * app, not prom-client's global one, so that several apps in one process (the tests) count apart. Recording is
 * always on and costs an increment; what costs more (timing every request, the process and event-loop
 * collectors) runs only while METRICS_PORT is set (`enabled`). Values read at scrape time (pool state, open
 * streams, the outbox backlog) are registered by their owners with `collect` functions.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly pools = new Map<string, Pool>();
  readonly enabled: boolean;

  readonly httpRequestDuration = this.histogram(
    'http_request_duration_seconds',
    'HTTP requests by method, route template and status, and how long each took to answer',
    ['method', 'route', 'status'],
    LATENCY_BUCKETS,
  );

  readonly connectFailures = this.counter(
    'db_pool_connect_failures_total',
    'Connections the pool could not open, or hand out within DATABASE_CONNECT_TIMEOUT_MS',
    ['pool'],
  );

  readonly statementTimeouts = this.counter(
    'db_statement_timeouts_total',
    'Statements cancelled by statement_timeout, or whose answer never came (connection dropped)',
    ['pool'],
  );

  readonly poolInUse = this.poolGauge(
    'db_pool_connections_in_use',
    'Connections handed out (running a statement or holding a transaction)',
    (pool) => pool.totalCount - pool.idleCount,
  );

  readonly poolIdle = this.poolGauge(
    'db_pool_connections_idle',
    'Open connections not in use',
    (pool) => pool.idleCount,
  );

  readonly poolWaiting = this.poolGauge(
    'db_pool_waiting',
    'Callers waiting for a connection: the pool is exhausted while above 0',
    (pool) => pool.waitingCount,
  );

  readonly outagesBegun = this.counter(
    'db_outages_total',
    'Database outages begun: the database stopped answering (requests answered 503)',
  );

  readonly databaseOut = new Gauge({
    name: 'db_outage',
    help: '1 while the database does not answer (requests answered 503), else 0',
    registers: [this.registry],
  });

  readonly deliveries = this.counter(
    'outbox_deliveries_total',
    'Delivery attempts by channel and outcome: sent, retry (failed, tried again later), failed (for good)',
    ['channel', 'outcome'],
  );

  // `job_name`, as Prometheus keeps `job` for the scrape job of the target.
  readonly jobRuns = this.counter(
    'job_runs_total',
    'Runs of the periodic jobs by job name and outcome (success, failure)',
    ['job_name', 'outcome'],
  );

  readonly jobDuration = this.histogram(
    'job_run_duration_seconds',
    'How long the runs of each periodic job took',
    ['job_name'],
    JOB_BUCKETS,
  );

  readonly jobLastRun = new Gauge({
    name: 'job_last_run_timestamp_seconds',
    help: 'When each periodic job last finished a run (Unix time), whatever its outcome',
    labelNames: ['job_name'] as const,
    registers: [this.registry],
  });

  readonly uploads = this.counter('uploads_total', 'Files stored (attachments, submission files)');

  readonly uploadBytes = this.counter('upload_bytes_total', 'Bytes of the files stored');

  constructor(config: Pick<AppConfig, 'metrics'>) {
    this.enabled = config.metrics.port !== null;
    if (this.enabled) collectDefaultMetrics({ register: this.registry });
  }

  /** A gauge without labels whose value `read` gives at each scrape. */
  readAtScrape(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /**
   * Runs the periodic job `name` once, in a span of its own (`job <name>`), recording its run, outcome and
   * duration; its error is rethrown.
   */
  async timeJob<T>(name: string, job: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let outcome = 'failure';
    try {
      const result = await inSpan(`job ${name}`, { 'job.name': name }, job);
      outcome = 'success';
      return result;
    } finally {
      this.jobRuns.inc({ job_name: name, outcome });
      this.jobDuration.observe({ job_name: name }, (performance.now() - started) / 1000);
      this.jobLastRun.set({ job_name: name }, Date.now() / 1000);
    }
  }

  /**
   * What the pool of `poolName` (`app`: TypeORM's, `export`: the CSV exports') reports; its state is read per
   * scrape. The database's `PoolObserver` by its shape: `common` does not import `database`.
   */
  poolObserver(poolName: string): {
    opened(pool: Pool): void;
    connectFailed(): void;
    statementTimedOut(): void;
  } {
    return {
      opened: (pool) => this.pools.set(poolName, pool),
      connectFailed: () => this.connectFailures.inc({ pool: poolName }),
      statementTimedOut: () => this.statementTimeouts.inc({ pool: poolName }),
    };
  }

  private counter<Label extends string = never>(
    name: string,
    help: string,
    labelNames: Label[] = [],
  ): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<Label extends string>(
    name: string,
    help: string,
    labelNames: Label[],
    buckets: number[],
  ): Histogram<Label> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  private poolGauge(name: string, help: string, read: (pool: Pool) => number): Gauge<'pool'> {
    const pools = this.pools;
    return new Gauge({
      name,
      help,
      labelNames: ['pool'] as const,
      registers: [this.registry],
      collect() {
        for (const [poolName, pool] of pools) this.set({ pool: poolName }, read(pool));
      },
    });
  }
}
