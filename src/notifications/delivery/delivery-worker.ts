import { inSpan } from '../../common/tracing/spans';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DatabaseOutage } from '../../common/errors/database-outage';
import { outsideKeyedWork } from '../../database/keyed-writes';
import { DeliveryJob, NOTIFICATION_CHANNELS, NotificationChannel } from '../channels/notification-channel';
import { DeliveryOutbox } from './delivery-outbox';

/** One channel's slots in this instance. */
interface Pool {
  channel: NotificationChannel;
  inFlight: Set<Promise<void>>;
  /** The claim running now, if any; at most one per pool. */
  claiming: Promise<void> | null;
  /** A wake-up arrived during the claim: claim again when it ends. */
  again: boolean;
}

/**
 * Sends claimed deliveries, each channel with its own bounded number of concurrent sends, so a slow or dead
 * endpoint of one channel holds at most that channel's slots, and only until its timeout. A finished send
 * frees its slot and claims the next delivery at once.
 */
@Injectable()
export class DeliveryWorker {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly pools: Pool[];
  private stopping = false;

  constructor(
    @Inject(NOTIFICATION_CHANNELS) channels: NotificationChannel[],
    private readonly outbox: DeliveryOutbox,
    private readonly outage: DatabaseOutage,
  ) {
    this.pools = channels.map((channel) => ({ channel, inFlight: new Set(), claiming: null, again: false }));
  }

  /**
   * Claims due deliveries for every free slot. Woken by a request, the claims and sends are the worker's own
   * work, no part of the request's (nor of its Idempotency-Key).
   */
  wake(): void {
    outsideKeyedWork(() => {
      for (const pool of this.pools) this.fill(pool);
    });
  }

  /** Stops claiming and waits for the sends in flight to finish (graceful shutdown). */
  async stop(): Promise<void> {
    this.stopping = true;
    for (;;) {
      const running = this.pools.flatMap((pool) => [
        ...pool.inFlight,
        ...(pool.claiming ? [pool.claiming] : []),
      ]);
      if (running.length === 0) return;
      await Promise.allSettled(running);
    }
  }

  private fill(pool: Pool): void {
    if (this.stopping) return;
    if (pool.claiming) {
      pool.again = true;
      return;
    }
    pool.claiming = this.claim(pool).finally(() => {
      pool.claiming = null;
      if (pool.again) {
        pool.again = false;
        this.fill(pool);
      }
    });
  }

  private async claim(pool: Pool): Promise<void> {
    const free = pool.channel.concurrency - pool.inFlight.size;
    if (free <= 0) return;
    try {
      const jobs = await this.outbox.claim(pool.channel.name, free);
      for (const job of jobs) this.start(pool, job);
    } catch (error) {
      if (!this.outage.report(error)) {
        this.logger.error({ err: error, channel: pool.channel.name }, 'Claiming deliveries failed');
      }
    }
  }

  private start(pool: Pool, job: DeliveryJob): void {
    const run = this.deliver(pool.channel, job).finally(() => {
      pool.inFlight.delete(run);
      this.fill(pool);
    });
    pool.inFlight.add(run);
  }

  private async deliver(channel: NotificationChannel, job: DeliveryJob): Promise<void> {
    let failure: unknown = null;
    try {
      await inSpan(
        `deliver ${channel.name}`,
        { 'delivery.id': job.id, 'delivery.channel': channel.name, 'delivery.attempt': job.attempt },
        () => channel.send(job),
      );
    } catch (error) {
      failure = error;
      this.logger.warn(
        { deliveryId: job.id, channel: channel.name, attempt: job.attempt, reason: (error as Error).message },
        'Delivery attempt failed',
      );
    }
    try {
      if (failure === null) await this.outbox.succeed(job);
      else await this.outbox.fail(job, failure);
    } catch (error) {
      // The claim's lease runs out and the delivery is retried by whichever worker claims it next.
      if (!this.outage.report(error)) {
        this.logger.error({ err: error, deliveryId: job.id }, 'Recording a delivery result failed');
      }
    }
  }
}
