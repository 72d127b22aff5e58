import { Injectable } from '@nestjs/common';
import { type Clock, InjectClock } from '../../config/clock';
import { DISPATCH_BATCH_SIZE, NotificationsRepository } from '../notifications.repository';

@Injectable()
export class NotificationDispatcher {
  constructor(
    @InjectClock() private readonly clock: Clock,
    private readonly notifications: NotificationsRepository,
  ) {}

  /** Routes every PENDING notification; answers how many deliveries were created. */
  async dispatchPending(): Promise<number> {
    let deliveries = 0;
    for (;;) {
      const batch = await this.notifications.dispatchBatch(this.clock.now());
      deliveries += batch.deliveries;
      if (batch.notifications < DISPATCH_BATCH_SIZE) return deliveries;
    }
  }
}
