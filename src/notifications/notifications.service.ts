import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { isoSql } from '../common/utils/time';
import { PreparedStatement } from '../database/prepared-statement';
import { ListNotificationsQuery } from './dto/list-notifications.query';
import {
  NotificationIdDto,
  NotificationPageDto,
  ReadAllResultDto,
  UnreadCountDto,
} from './dto/notification.response';
import { InboxRow, toNotificationDto } from './notifications.mapper';

const INBOX_COLUMNS = `n.id, n.type, n.task_id AS "taskId", n.class_id AS "classId", n.task_title AS "taskTitle",
  n.class_name AS "className", n.title, n.content, ${isoSql('n.read_at')} AS "readAt",
  ${isoSql('n.created_at')} AS "createdAt"`;

interface InboxPageRow extends InboxRow {
  unread_count: number;
  cursor_found: boolean;
}

/**
 * One page of the inbox (`rows` rows), the unread count and, after a cursor (`$2`), whether the cursor names
 * a SENT notification of the caller: one prepared statement per variant and page size. Separate texts keep
 * the keyset range an index condition, and a literal LIMIT lets PostgreSQL keep one generic plan (with
 * `LIMIT $n` it planned the first page anew on every call).
 */
function inboxPage(after: boolean, unreadOnly: boolean, rows: number): PreparedStatement<InboxPageRow> {
  return new PreparedStatement<InboxPageRow>(
    `notifications.inbox_${after ? 'after' : 'first'}_${unreadOnly ? 'unread' : 'all'}_${rows}`,
    `${
      after
        ? `WITH anchor AS (
             SELECT c.created_at, c.id FROM notifications c WHERE c.id = $2 AND c.user_id = $1 AND c.status = 'SENT'
           )`
        : ''
    }
     SELECT u.unread_count, ${after ? 'EXISTS (SELECT 1 FROM anchor)' : 'NULL::boolean'} AS cursor_found, p.*
       FROM (SELECT count(*)::int AS unread_count FROM notifications
              WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL) u
       LEFT JOIN LATERAL (
         SELECT ${INBOX_COLUMNS}, n.created_at AS sort_at FROM notifications n
          WHERE n.user_id = $1 AND n.status = 'SENT'
                ${unreadOnly ? 'AND n.read_at IS NULL' : ''}
                ${after ? 'AND (n.created_at, n.id) < (SELECT created_at, id FROM anchor)' : ''}
          ORDER BY n.created_at DESC, n.id DESC
          LIMIT ${rows}
       ) p ON true
      ORDER BY p.sort_at DESC, p.id DESC`,
  );
}

/** Made on first use: at most 4 variants × 50 page sizes. */
const inboxPages = new Map<string, PreparedStatement<InboxPageRow>>();

function inboxPageFor(after: boolean, unreadOnly: boolean, rows: number): PreparedStatement<InboxPageRow> {
  const key = `${after}_${unreadOnly}_${rows}`;
  let page = inboxPages.get(key);
  if (!page) {
    page = inboxPage(after, unreadOnly, rows);
    inboxPages.set(key, page);
  }
  return page;
}

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
    // One row more than asked tells whether there is a next page.
    const page = inboxPageFor(Boolean(cursor), unreadOnly, limit + 1);
    const rows = await page.rows(this.dataSource, cursor ? [userId, cursor] : [userId]);
    if (cursor && !rows[0].cursor_found) {
      throw AppError.validation('cursor does not name a notification of yours');
    }
    // An empty page is one row without a notification, carrying the unread count.
    const found = rows.filter((row) => row.id !== null);
    const items = found.slice(0, limit).map(toNotificationDto);
    const nextCursor = found.length > limit ? items[items.length - 1].id : null;
    return { items, nextCursor, unreadCount: rows[0].unread_count };
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
