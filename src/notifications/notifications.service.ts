import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { keysetPage } from '../common/pagination/keyset';
import { ListNotificationsQuery } from './dto/list-notifications.query';
import {
  NotificationIdDto,
  NotificationPageDto,
  ReadAllResultDto,
  UnreadCountDto,
} from './dto/notification.response';
import { Transactions } from '../database/transactions';
import { toNotificationDto } from './notifications.mapper';
import { NotificationsRepository } from './notifications.repository';

/** The caller's inbox: SENT notifications only. */
@Injectable()
export class NotificationsService {
  constructor(
    private readonly notifications: NotificationsRepository,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Newest first by (createdAt, id), keyset-paginated: the cursor is the id of the previous page's last item,
   * as the API defines it (the keyset helper's `row-id` cursor), and its place is read in SQL.
   */
  async list(userId: string, query: ListNotificationsQuery): Promise<NotificationPageDto> {
    const { limit, cursor, unreadOnly } = query;
    // One row more than asked tells whether there is a next page.
    const rows = await this.notifications.inboxPage(userId, cursor, unreadOnly, limit + 1);
    if (cursor && !rows[0].cursor_found) {
      throw AppError.validation('cursor does not name a notification of yours');
    }
    // An empty page is one row without a notification, carrying the unread count.
    const found = rows.filter((row) => row.id !== null);
    const { page, nextCursor } = keysetPage(found, limit, 'row-id');
    return { items: page.map(toNotificationDto), nextCursor, unreadCount: rows[0].unread_count };
  }

  async unreadCount(userId: string): Promise<UnreadCountDto> {
    return { unreadCount: await this.notifications.unreadCount(userId) };
  }

  /** Sets readAt once; a second call keeps the first time. */
  async markRead(userId: string, id: string): Promise<NotificationIdDto> {
    const marked = await this.transactions.writeOne((db) => this.notifications.markRead(db, userId, id));
    if (marked === null) throw AppError.notFound('Notification');
    return { id: marked };
  }

  async markAllRead(userId: string): Promise<ReadAllResultDto> {
    return { updated: await this.transactions.writeOne((db) => this.notifications.markAllRead(db, userId)) };
  }
}
