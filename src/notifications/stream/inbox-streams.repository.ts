import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuthUser } from '../../common/decorators/current-user.decorator';
import { isoSql } from '../../common/utils/time';
import { Db, one, rows } from '../../database/sql';
import { InboxRow } from '../notifications.mapper';
import { INBOX_COLUMNS } from '../notifications.repository';
import { Transactions } from '../../database/transactions';

/** Open live inbox streams per user, across instances. */
export const MAX_STREAMS_PER_USER = 5;
/**
 * Told `<userId> <streamId>` at the commit that replaced a ticket's stream by a new one on the same ticket:
 * the instance holding the old stream ends it.
 */
export const STREAM_REPLACED_CHANNEL = 'notification_stream_replaced';
/** Items one replay sends at most (Last-Event-ID far behind, or a catch-up after a listener outage). */
export const MAX_REPLAY_ITEMS = 500;

/**
 * New inbox items of a user, oldest first (`sort_at`), with the unread count on every row (one row with id
 * null: none).
 */
export type InboxChangeRow = { unreadCount: number; sort_at: Date | null } & (
  InboxRow | { [K in keyof InboxRow]: null }
);

const ITEMS_WITH_COUNT = (itemFilter: string) => `
  SELECT u.count AS "unreadCount", p.*
    FROM (SELECT count(*)::int AS count FROM notifications
           WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL) u
    LEFT JOIN LATERAL (
      SELECT ${INBOX_COLUMNS}, n.created_at AS sort_at FROM notifications n
       WHERE n.user_id = $1 AND n.status = 'SENT' AND ${itemFilter}
       ORDER BY n.created_at, n.id
       LIMIT ${MAX_REPLAY_ITEMS}
    ) p ON true
   ORDER BY p.sort_at, p.id`;

/** The open streams (one row each, leased by their instance) and the tickets that open them. */
@Injectable()
export class InboxStreamsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Records an open stream unless the user has MAX_STREAMS_PER_USER live ones (leases not expired) on any
   * instance; the stream's id, or null at the limit or for an inactive user. A transaction-scoped advisory
   * lock per user makes concurrent opens count one after another. A stream opened with a ticket first
   * replaces the one the ticket opened before (its row goes, and its instance hears of it on
   * STREAM_REPLACED_CHANNEL at commit), and keeps the ticket's token version.
   */
  open(
    userId: string,
    instanceId: string,
    leaseMs: number,
    ticketHash: Buffer | null,
  ): Promise<string | null> {
    return this.transactions.run(async (manager) => {
      await rows(
        manager,
        `SELECT pg_advisory_xact_lock(hashtextextended('notification_streams:' || $1, 0))`,
        [userId],
      );
      if (ticketHash) {
        await rows(
          manager,
          `WITH replaced AS (
             DELETE FROM notification_streams WHERE ticket_hash = $2 AND user_id = $1 RETURNING id
           )
           SELECT pg_notify('${STREAM_REPLACED_CHANNEL}', $1 || ' ' || id) FROM replaced`,
          [userId, ticketHash],
        );
      }
      const row = await one<{ id: string }>(
        manager,
        `INSERT INTO notification_streams (user_id, instance_id, token_version, expires_at, ticket_hash)
         SELECT u.id, $2, coalesce(t.token_version, u.token_version), now() + $3 * interval '1 millisecond', $5
           FROM users u
           LEFT JOIN notification_stream_tickets t ON t.ticket_hash = $5 AND t.user_id = u.id
          WHERE u.id = $1 AND u.is_active
            AND (SELECT count(*) FROM notification_streams s WHERE s.user_id = $1 AND s.expires_at > now()) < $4
         RETURNING id`,
        [userId, instanceId, leaseMs, MAX_STREAMS_PER_USER, ticketHash],
      );
      return row?.id ?? null;
    });
  }

  /**
   * Renews the lease of the streams `ids` whose user is still active with the token version of the stream's
   * start; answers those, so the others (tokens revoked, user deactivated or deleted) end.
   */
  async renew(ids: string[], leaseMs: number): Promise<Set<string>> {
    const renewed = await rows<{ id: string }>(
      this.dataSource,
      `UPDATE notification_streams s SET expires_at = now() + $2 * interval '1 millisecond'
         FROM users u
        WHERE s.id = ANY($1::uuid[]) AND u.id = s.user_id AND u.is_active AND u.token_version = s.token_version
        RETURNING s.id`,
      [ids, leaseMs],
    );
    return new Set(renewed.map((row) => row.id));
  }

  async close(ids: string[]): Promise<void> {
    // Expired rows of any instance go too: a crashed instance leaves its rows behind.
    await rows(
      this.dataSource,
      `DELETE FROM notification_streams WHERE id = ANY($1::uuid[]) OR expires_at < now() - interval '1 hour'`,
      [ids],
    );
  }

  /** The unread count and the user's SENT notifications among `ids`, oldest first. */
  itemsByIds(userId: string, ids: string[]): Promise<InboxChangeRow[]> {
    return rows(this.dataSource, ITEMS_WITH_COUNT('n.id = ANY($2::uuid[])'), [userId, ids]);
  }

  /**
   * The unread count and the user's notifications after `afterId` by (createdAt, id), oldest first; none
   * when `afterId` names no notification of the user's inbox.
   */
  itemsAfter(userId: string, afterId: string): Promise<InboxChangeRow[]> {
    return rows(
      this.dataSource,
      ITEMS_WITH_COUNT(
        `(n.created_at, n.id) > (SELECT a.created_at, a.id FROM notifications a
                                  WHERE a.id = $2 AND a.user_id = $1 AND a.status = 'SENT')`,
      ),
      [userId, afterId],
    );
  }

  /** Stores a ticket (its hash) for the user's current token version; drops the user's expired ones. */
  async createTicket(db: Db, userId: string, ticketHash: Buffer, ttlMs: number): Promise<string> {
    const row = await one<{ expiresAt: string }>(
      db,
      `WITH expired AS (
         DELETE FROM notification_stream_tickets WHERE user_id = $1 AND expires_at <= now()
       )
       INSERT INTO notification_stream_tickets (ticket_hash, user_id, token_version, expires_at)
       SELECT $2, u.id, u.token_version, now() + $3 * interval '1 millisecond' FROM users u WHERE u.id = $1
       RETURNING ${isoSql('expires_at')} AS "expiresAt"`,
      [userId, ticketHash, ttlMs],
    );
    return row!.expiresAt;
  }

  /**
   * The user of a ticket that has not expired, when they are active with the token version it was issued for.
   * The ticket stays: it may open its stream again until it expires.
   */
  ticketUser(ticketHash: Buffer): Promise<AuthUser | null> {
    return one<AuthUser>(
      this.dataSource,
      `SELECT u.id, u.email, u.timezone FROM notification_stream_tickets t JOIN users u ON u.id = t.user_id
        WHERE t.ticket_hash = $1 AND t.expires_at > now() AND u.is_active AND u.token_version = t.token_version`,
      [ticketHash],
    );
  }
}
