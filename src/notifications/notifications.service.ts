import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { ListNotificationsQuery } from './dto/list-notifications.query';
import {
  NotificationIdDto,
  NotificationPageDto,
  ReadAllResultDto,
  UnreadCountDto,
} from './dto/notification.response';
import { InboxRow, toNotificationDto } from './notifications.mapper';

const INBOX_COLUMNS = `n.id, n.type, n.task_id AS "taskId", n.class_id AS "classId", n.task_title AS "taskTitle",
  n.class_name AS "className", n.title, n.content, n.read_at AS "readAt", n.created_at AS "createdAt"`;

/** The caller's inbox: SENT notifications only. */
@Injectable()
export class NotificationsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Newest first by (createdAt, id), keyset-paginated: the cursor is the id of the previous page's last item,
   * and its position is read in SQL (microsecond timestamps would not survive a trip through JavaScript).
   */
  async list(userId: string, query: ListNotificationsQuery): Promise<NotificationPageDto> {
    const { limit, cursor, unreadOnly } = query;
    if (cursor) {
      const found: unknown[] = await this.dataSource.query(
        `SELECT 1 FROM notifications WHERE id = $1 AND user_id = $2 AND status = 'SENT'`,
        [cursor, userId],
      );
      if (found.length === 0) throw AppError.validation('cursor does not name a notification of yours');
    }
    const conditions = [`n.user_id = $1`, `n.status = 'SENT'`];
    const params: unknown[] = [userId, limit + 1];
    if (unreadOnly) conditions.push(`n.read_at IS NULL`);
    if (cursor) {
      params.push(cursor);
      conditions.push(
        `(n.created_at, n.id) < (SELECT c.created_at, c.id FROM notifications c WHERE c.id = $3)`,
      );
    }
    const rows: InboxRow[] = await this.dataSource.query(
      `SELECT ${INBOX_COLUMNS} FROM notifications n
        WHERE ${conditions.join(' AND ')}
        ORDER BY n.created_at DESC, n.id DESC
        LIMIT $2`,
      params,
    );
    const items = rows.slice(0, limit).map(toNotificationDto);
    const nextCursor = rows.length > limit ? items[items.length - 1].id : null;
    const { unreadCount } = await this.unreadCount(userId);
    return { items, nextCursor, unreadCount };
  }

  async unreadCount(userId: string): Promise<UnreadCountDto> {
    const [row]: { unreadCount: number }[] = await this.dataSource.query(
      `SELECT count(*)::int AS "unreadCount" FROM notifications WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL`,
      [userId],
    );
    return row;
  }

  /** Sets readAt once; a second call keeps the first time. */
  async markRead(userId: string, id: string): Promise<NotificationIdDto> {
    const rows: NotificationIdDto[] = await this.dataSource.query(
      `WITH marked AS (
         UPDATE notifications SET read_at = coalesce(read_at, now())
          WHERE id = $1 AND user_id = $2 AND status = 'SENT'
          RETURNING id)
       SELECT id FROM marked`,
      [id, userId],
    );
    if (rows.length === 0) throw AppError.notFound('Notification');
    return { id: rows[0].id };
  }

  async markAllRead(userId: string): Promise<ReadAllResultDto> {
    const [row]: ReadAllResultDto[] = await this.dataSource.query(
      `WITH marked AS (
         UPDATE notifications SET read_at = now()
          WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL
          RETURNING 1)
       SELECT count(*)::int AS updated FROM marked`,
      [userId],
    );
    return row;
  }
}
