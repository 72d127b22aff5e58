import { Injectable, Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../../common/metrics/metrics';
import { type Clock, InjectClock } from '../../config/clock';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { DeliveriesRepository, OutboxBacklog } from './deliveries.repository';

/**
 * The outbox backlog as gauges read at scrape time: one query per scrape for both, whichever gauge asks
 * first (prom-client collects the gauges of a scrape together). Every channel is reported, 0 when nothing
 * waits. A failed query (the database is out) leaves both gauges empty for that scrape, so the rest of the
 * metrics, the outage among them, are still served.
 */
@Injectable()
export class OutboxMetrics {
  private readonly logger = new Logger(OutboxMetrics.name);
  private reading: Promise<OutboxBacklog[] | null> | null = null;

  constructor(
    metrics: Metrics,
    private readonly deliveries: DeliveriesRepository,
    @InjectClock() private readonly clock: Clock,
  ) {
    this.gauge(metrics, 'outbox_pending', 'Deliveries waiting to be sent, by channel', (b) => b.pending);
    this.gauge(
      metrics,
      'outbox_oldest_due_age_seconds',
      'How long the oldest delivery due has been waiting past its time, by channel (0: none is late)',
      (b) => b.oldestDueSeconds,
    );
  }

  private gauge(
    metrics: Metrics,
    name: string,
    help: string,
    read: (backlog: OutboxBacklog) => number,
  ): void {
    const backlog = () => this.backlog();
    new Gauge({
      name,
      help,
      labelNames: ['channel'] as const,
      registers: [metrics.registry],
      async collect() {
        const channels = await backlog();
        this.reset();
        if (!channels) return;
        for (const channel of Object.values(NotificationChannelName)) {
          const found = channels.find((row) => row.channel === channel);
          this.set({ channel }, found ? read(found) : 0);
        }
      },
    });
  }

  /** The backlog of the scrape under way, read once for its gauges. */
  private backlog(): Promise<OutboxBacklog[] | null> {
    this.reading ??= this.deliveries
      .backlog(this.clock.now())
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'Outbox backlog not read');
        return null;
      })
      .finally(() => (this.reading = null));
    return this.reading;
  }
}
