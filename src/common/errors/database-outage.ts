import { Injectable, Logger, Module, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics } from '../metrics/metrics';
import { MetricsModule } from '../metrics/metrics.module';
import { isDatabaseUnavailable } from './failure-cause';

/** While the database is out, how often a probe checks whether it answers again. */
const PROBE_INTERVAL_MS = 1_000;
/** Retry-After of a request refused for an unreachable database. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** pg's error for a connection attempt that got no answer within `connectionTimeoutMillis`. */
const CONNECT_TIMEOUT = 'Connection terminated due to connection timeout';

/**
 * Whether the database answers, as the errors of requests and jobs tell. Every request fails while it is out;
 * this keeps the log to one warning when an outage begins and one line when it ends (a probe notices), so the
 * log stays readable and a stack per request does not bury the cause.
 */
@Injectable()
export class DatabaseOutage implements OnModuleDestroy {
  private readonly logger = new Logger('Database');
  private out = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private recoveredAt = -Infinity;

  /**
   * `connectTimeoutMs`: the connection attempts' limit (DATABASE_CONNECT_TIMEOUT_MS); `metrics` count the
   * outages and show whether one is under way.
   */
  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly connectTimeoutMs = 0,
    private readonly metrics?: Pick<Metrics, 'outagesBegun' | 'databaseOut'>,
  ) {}

  /**
   * Answers whether `error` says the database is unreachable; the first such error of an outage is logged
   * here, the others not at all. Any other error is left to the caller to report.
   */
  report(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (!this.out && !this.attemptOfThePastOutage(error)) {
      this.out = true;
      this.metrics?.outagesBegun.inc();
      this.metrics?.databaseOut.set(1);
      const { message, code } = error as { message?: string; code?: string };
      this.logger.warn(
        { reason: message, code },
        'Database unreachable: requests answer 503 SERVICE_UNAVAILABLE until it answers again',
      );
      this.scheduleProbe();
    }
    return true;
  }

  /**
   * A connection attempt that timed out began `connectTimeoutMs` before: within that time of a recovery it
   * was made during the outage that ended (a silent network leaves such attempts hanging), not a new one.
   */
  private attemptOfThePastOutage(error: unknown): boolean {
    return (
      (error as { message?: string }).message === CONNECT_TIMEOUT &&
      Date.now() - this.recoveredAt < this.connectTimeoutMs
    );
  }

  onModuleDestroy(): void {
    this.closing = true;
    clearTimeout(this.probeTimer);
  }

  private scheduleProbe(): void {
    if (this.closing) return;
    this.probeTimer = setTimeout(() => void this.check(), PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  private async check(): Promise<void> {
    try {
      await this.probe();
    } catch {
      this.scheduleProbe();
      return;
    }
    this.out = false;
    this.metrics?.databaseOut.set(0);
    this.recoveredAt = Date.now();
    this.logger.log('Database reachable again');
  }
}

/**
 * Imported by the composition root (for the exception filter) and by the modules whose jobs report
 * failures; Nest makes one instance of a module, so all report to the same outage state.
 */
@Module({
  imports: [MetricsModule],
  providers: [
    {
      provide: DatabaseOutage,
      useFactory: (dataSource: DataSource, config: AppConfig, metrics: Metrics) =>
        new DatabaseOutage(() => dataSource.query('SELECT 1'), config.database.connectTimeoutMs, metrics),
      inject: [DataSource, APP_CONFIG, Metrics],
    },
  ],
  exports: [DatabaseOutage],
})
export class DatabaseOutageModule {}
