import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** Notifications routed per statement. */
const BATCH_SIZE = 5000;

/**
 * Takes a batch of PENDING notifications (rows other instances hold are skipped), creates one delivery per
 * enabled channel preference of the recipient (EMAIL to the registration address when the recipient has no
 * EMAIL preference at all), and marks the batch SENT, which puts it in the inbox. One statement, so a
 * notification is routed exactly once.
 */
const DISPATCH_SQL = `
  WITH batch AS (
    SELECT id, user_id FROM notifications
     WHERE status = 'PENDING'
     ORDER BY created_at
     LIMIT ${BATCH_SIZE}
     FOR UPDATE SKIP LOCKED
  ), routed AS (
    INSERT INTO notification_deliveries (notification_id, channel, address)
    SELECT b.id, p.channel, p.address
      FROM batch b JOIN notification_prefs p ON p.user_id = b.user_id AND p.is_enabled
    UNION ALL
    SELECT b.id, 'EMAIL', u.email
      FROM batch b JOIN users u ON u.id = b.user_id
     WHERE NOT EXISTS (SELECT 1 FROM notification_prefs p WHERE p.user_id = b.user_id AND p.channel = 'EMAIL')
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), sent AS (
    UPDATE notifications n SET status = 'SENT' FROM batch b WHERE n.id = b.id RETURNING 1
  )
  SELECT (SELECT count(*) FROM sent)::int AS notifications, (SELECT count(*) FROM routed)::int AS deliveries`;

@Injectable()
export class NotificationDispatcher {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Routes every PENDING notification; answers how many deliveries were created. */
  async dispatchPending(): Promise<number> {
    let deliveries = 0;
    for (;;) {
      const [batch]: { notifications: number; deliveries: number }[] =
        await this.dataSource.query(DISPATCH_SQL);
      deliveries += batch.deliveries;
      if (batch.notifications < BATCH_SIZE) return deliveries;
    }
  }
}
