import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery log on the outbox. A delivery of a user (a notification's, a TEST event's or
 * a redelivery) names its owner and event type; account e-mails carry neither and stay out of the log. A
 * redelivery points at the delivery it repeats (`original_id`, whose id stays the `webhook-id`), so the
 * one-per-notification-and-channel rule holds for originals only, and each original has at most one
 * redelivery pending at a time. SKIPPED: left unsent because it was out of date when its turn came.
 */
export class DeliveryLog1764000600000 implements MigrationInterface {
  name = 'DeliveryLog1764000600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notification_deliveries
        ADD COLUMN user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        ADD COLUMN type varchar(30),
        ADD COLUMN original_id uuid;

      UPDATE notification_deliveries d SET user_id = n.user_id, type = n.type
        FROM notifications n WHERE n.id = d.notification_id;
      UPDATE notification_deliveries SET status = 'SKIPPED'
       WHERE status = 'FAILED' AND last_error LIKE 'not sent: %';

      ALTER TABLE notification_deliveries
        DROP CONSTRAINT notification_deliveries_status_check,
        ADD CONSTRAINT ck_notification_deliveries_status
          CHECK (status IN ('PENDING', 'SENT', 'FAILED', 'SKIPPED')),
        DROP CONSTRAINT ck_notification_deliveries_source,
        ADD CONSTRAINT ck_notification_deliveries_source CHECK (
          CASE WHEN payload IS NOT NULL
               THEN notification_id IS NULL AND user_id IS NULL AND type IS NULL AND original_id IS NULL
               ELSE user_id IS NOT NULL AND type IS NOT NULL AND (notification_id IS NULL) = (type = 'TEST')
          END),
        DROP CONSTRAINT uq_notification_deliveries_channel;

      CREATE UNIQUE INDEX uq_notification_deliveries_channel
        ON notification_deliveries (notification_id, channel) WHERE original_id IS NULL;
      CREATE UNIQUE INDEX uq_notification_deliveries_pending_redelivery
        ON notification_deliveries (original_id) WHERE status = 'PENDING';
      CREATE INDEX ix_notification_deliveries_log
        ON notification_deliveries (user_id, created_at DESC, id DESC) WHERE user_id IS NOT NULL;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notification_deliveries WHERE original_id IS NOT NULL OR type = 'TEST';
      UPDATE notification_deliveries SET status = 'FAILED' WHERE status = 'SKIPPED';
      DROP INDEX ix_notification_deliveries_log, uq_notification_deliveries_pending_redelivery,
        uq_notification_deliveries_channel;
      ALTER TABLE notification_deliveries
        DROP CONSTRAINT ck_notification_deliveries_source,
        DROP CONSTRAINT ck_notification_deliveries_status,
        DROP COLUMN user_id,
        DROP COLUMN type,
        DROP COLUMN original_id,
        ADD CONSTRAINT notification_deliveries_status_check CHECK (status IN ('PENDING', 'SENT', 'FAILED')),
        ADD CONSTRAINT ck_notification_deliveries_source CHECK ((notification_id IS NULL) <> (payload IS NULL)),
        ADD CONSTRAINT uq_notification_deliveries_channel UNIQUE (notification_id, channel);
    `);
  }
}
