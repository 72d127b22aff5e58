import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions';
import { AppError } from '../common/errors/app-error';
import { type Clock, InjectClock } from '../config/clock';
import { KeysetPlace, readKeysetPage } from '../common/pagination/keyset';
import { DeliveriesRepository } from './delivery/deliveries.repository';
import { DeliveryWorker } from './delivery/delivery-worker';
import { DeliveryDto, DeliveryPageDto, ListDeliveriesQuery } from './dto/delivery.dto';
import { DeliveryStatus } from './entities/notification-delivery.entity';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { toDeliveryDto } from './notifications.mapper';

/** The cursor the log answered before the shared format: `<created_at to the microsecond, ISO>|<id>`. */
const LEGACY_CURSOR =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})Z\|([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})$/;

function legacyPlace(text: string): KeysetPlace | null {
  const match = LEGACY_CURSOR.exec(text);
  const wholeSecondMs = match ? Date.parse(`${match[1]}Z`) : NaN;
  if (!match || Number.isNaN(wholeSecondMs)) return null;
  return { micros: String(BigInt(wholeSecondMs) * 1000n + BigInt(match[2])), id: match[3] };
}

/**
 * The caller's delivery log: their deliveries on the outbox, as long as retention keeps them;
 * test events and redeliveries are queued there like any other delivery, and the worker is woken for them.
 */
@Injectable()
export class DeliveryLogService {
  constructor(
    @InjectClock() private readonly clock: Clock,
    private readonly deliveries: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Newest first by (createdAt, id), keyset-paginated. The cursor holds the position itself, so it stays
   * valid when retention deletes the row it came from.
   */
  async list(userId: string, query: ListDeliveriesQuery): Promise<DeliveryPageDto> {
    const { channel, status, cursor, limit } = query;
    const { page, nextCursor } = await readKeysetPage(
      cursor,
      limit,
      (after, rows) => this.deliveries.logPage(userId, { channel, status, after }, rows),
      legacyPlace,
    );
    return { items: page.map(toDeliveryDto), nextCursor };
  }

  /** Sends a finished delivery again, as a new PENDING one. */
  async redeliver(userId: string, deliveryId: string): Promise<DeliveryDto> {
    const { originalStatus, created } = await this.transactions.writeOne((db) =>
      this.deliveries.redeliver(db, userId, deliveryId, this.clock.now()),
    );
    if (originalStatus === undefined) throw AppError.notFound('Delivery');
    if (!created) {
      const finished = originalStatus === DeliveryStatus.SENT || originalStatus === DeliveryStatus.FAILED;
      throw AppError.conflict(
        finished
          ? 'A redelivery of this delivery is already pending'
          : `Only SENT or FAILED deliveries can be redelivered; this one is ${originalStatus}`,
      );
    }
    this.worker.wake();
    return toDeliveryDto(created);
  }

  /** Queues a TEST event through the caller's preference for `channel`. */
  async sendTest(userId: string, channel: NotificationChannelName): Promise<DeliveryDto> {
    const created = await this.transactions.writeOne((db) =>
      this.deliveries.queueTest(db, userId, channel, this.clock.now()),
    );
    if (!created) throw AppError.notFound('Notification preference');
    this.worker.wake();
    return toDeliveryDto(created);
  }
}
