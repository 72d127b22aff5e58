import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { DatabaseOutage } from '../common/errors/database-outage';
import { Metrics } from '../common/metrics/metrics';
import { DeliveryWorker } from './delivery/delivery-worker';
import { NotificationDispatcher } from './delivery/notification-dispatcher';
import { NotificationProducer } from './production/notification-producer';
import { NotificationScheduleService } from './notification-schedule.service';

const SCHEDULED_JOB = 'notifications.scheduled';
const DELIVERY_JOB = 'notifications.delivery';

/**
 * The two periodic jobs. The scheduled one (SCHEDULER_CRON) produces reminders, looks at every task for
 * one to announce, and applies the users' schedules (quiet hours, digests); the delivery loop (DELIVERY_POLL_INTERVAL_MS) announces tasks that became visible lately,
 * routes new notifications and wakes the delivery worker, so a publication reaches the inbox within about one
 * poll interval. Every instance runs both; the database decides who does what.
 */
@Injectable()
export class NotificationJobs implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NotificationJobs.name);
  /** A run of each job in progress: a tick that finds its job still running is skipped. */
  private readonly running = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly registry: SchedulerRegistry,
    private readonly producer: NotificationProducer,
    private readonly dispatcher: NotificationDispatcher,
    private readonly schedules: NotificationScheduleService,
    private readonly worker: DeliveryWorker,
    private readonly outage: DatabaseOutage,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    const { schedulerCron, pollIntervalMs } = this.config.notifications;
    const cron = CronJob.from({
      cronTime: schedulerCron,
      onTick: () => this.run(SCHEDULED_JOB, () => this.cycle(true)),
      start: true,
    });
    this.registry.addCronJob(SCHEDULED_JOB, cron);
    this.registry.addInterval(
      DELIVERY_JOB,
      setInterval(() => this.run(DELIVERY_JOB, () => this.cycle(false)), pollIntervalMs),
    );
  }

  /** Graceful shutdown: no new runs, the current ones and the sends in flight finish. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.registry.deleteInterval(DELIVERY_JOB);
    this.registry.deleteCronJob(SCHEDULED_JOB);
    await Promise.allSettled([...this.running.values()]);
    await this.worker.stop();
  }

  /**
   * `scheduled`: the SCHEDULER_CRON run, with reminders, a publication scan over every task, and the users'
   * schedules (held deliveries realigned, due digests made, after routing so they list what just came).
   */
  private async cycle(scheduled: boolean): Promise<void> {
    // Announcements first: a task due soon is announced before it is reminded of, in the inbox too.
    await this.producer.publishDue(scheduled ? 'all' : 'recent');
    if (scheduled) await this.producer.remindDue();
    await this.dispatcher.dispatchPending();
    if (scheduled) await this.schedules.applyDue();
    this.worker.wake();
  }

  private run(name: string, job: () => Promise<void>): void {
    if (this.stopping || this.running.has(name)) return;
    const run = this.metrics
      .timeJob(name, job)
      .catch((error: unknown) => {
        // While the database is out the next tick tries again; the outage itself is logged once.
        if (!this.outage.report(error)) {
          this.logger.error({ err: error, job: name }, 'Notification job failed');
        }
      })
      .finally(() => this.running.delete(name));
    this.running.set(name, run);
  }
}
