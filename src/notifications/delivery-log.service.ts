import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { DeliveriesRepository, DeliveryLogFilter, DeliveryLogRow } from './delivery/deliveries.repository';
import { DeliveryWorker } from './delivery/delivery-worker';
import { DeliveryDto, DeliveryPageDto, ListDeliveriesQuery } from './dto/delivery.dto';
import { DeliveryStatus } from './entities/notification-delivery.entity';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { toDeliveryDto } from './notifications.mapper';

/** A cursor's content: the last row's created_at to the microsecond, and its id. */
const CURSOR =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})$/;

const encodeCursor = (row: DeliveryLogRow): string =>
  Buffer.from(`${row.sortAt}|${row.id}`).toString('base64url');

function decodeCursor(cursor: string): DeliveryLogFilter['after'] {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || Number.isNaN(Date.parse(match[1]))) throw AppError.validation('cursor is malformed');
  return { sortAt: match[1], id: match[2] };
}

/**
 * The caller's delivery log: their deliveries on the outbox, as long as retention keeps them;
 * test events and redeliveries are queued there like any other delivery, and the worker is woken for them.
 */
@Injectable()
export class DeliveryLogService {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
  ) {}

  /**
   * Newest first by (createdAt, id), keyset-paginated. The cursor holds the position itself, so it stays
   * valid when retention deletes the row it came from.
   */
  async list(userId: string, query: ListDeliveriesQuery): Promise<DeliveryPageDto> {
    const { channel, status, cursor, limit } = query;
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    // One row more than asked tells whether there is a next page.
    const rows = await this.deliveries.logPage(userId, { channel, status, after }, limit + 1);
    const page = rows.slice(0, limit);
    return {
      items: page.map(toDeliveryDto),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  /** Sends a finished delivery again, as a new PENDING one. */
  async redeliver(userId: string, deliveryId: string): Promise<DeliveryDto> {
    const { originalStatus, created } = await this.deliveries.redeliver(userId, deliveryId);
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
    const created = await this.deliveries.queueTest(userId, channel);
    if (!created) throw AppError.notFound('Notification preference');
    this.worker.wake();
    return toDeliveryDto(created);
  }
}
