import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { type AppConfig } from '../config/config';
import { type Clock, InjectClock } from '../config/clock';
import { InjectConfig } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { DeliveryWorker } from './delivery/delivery-worker';
import { NotificationScheduleDto } from './dto/notification-schedule.dto';
import { toNotificationScheduleDto } from './notifications.mapper';
import { NotificationSchedulesRepository } from './schedule/notification-schedules.repository';

/**
 * Quiet hours and the daily digest: the users' schedules, and the scheduler's part of them. The outbox applies
 * a schedule to each delivery when it routes and claims it (see `schedule/schedule.sql.ts`); here a schedule
 * is saved, held deliveries follow a changed schedule or time zone, and the due digests are made.
 */
@Injectable()
export class NotificationScheduleService {
  private readonly logger = new Logger(NotificationScheduleService.name);

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    @InjectClock() private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly schedules: NotificationSchedulesRepository,
    private readonly worker: DeliveryWorker,
  ) {}

  async get(userId: string): Promise<NotificationScheduleDto> {
    return toNotificationScheduleDto(await this.schedules.find(userId));
  }

  /** Replaces the schedule; what the user's quiet hours hold follows it at once. */
  async put(userId: string, body: NotificationScheduleDto): Promise<NotificationScheduleDto> {
    const quiet = body.quietHours;
    if (quiet && quiet.start === quiet.end) {
      throw AppError.validation('quietHours.start and quietHours.end must differ');
    }
    const saved = await this.transactions.run(async (tx) => {
      const row = await this.schedules.save(tx, userId, {
        quietStart: quiet?.start ?? null,
        quietEnd: quiet?.end ?? null,
        digest: body.digest,
        digestAt: body.digestAt,
      });
      await this.schedules.realignHeldOf(tx, userId, this.clock.now());
      return row;
    });
    // Deliveries the new schedule no longer holds are due now.
    this.worker.wake();
    return toNotificationScheduleDto(saved);
  }

  /**
   * The scheduler's run: held deliveries follow their users' current schedules and time zones (a time zone
   * changed on the profile included), and the digests due now are made; one statement each, for every user.
   */
  async applyDue(): Promise<void> {
    const now = this.clock.now();
    const limitMs = this.config.database.bulkQueryTimeoutMs;
    await this.schedules.realignHeld(now, limitMs);
    const run = await this.schedules.makeDueDigests(now, limitMs);
    if (run.digests > 0) {
      this.logger.log(`Daily digests: ${run.digests} listing ${run.items} notifications`);
    }
  }
}
