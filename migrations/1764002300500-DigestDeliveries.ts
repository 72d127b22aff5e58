import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user's delivery without a notification is now a TEST event or a DIGEST (one e-mail listing the
 * notifications since the previous digest); every other one names its notification.
 */
export class DigestDeliveries1764002300500 implements MigrationInterface {
  name = 'DigestDeliveries1764002300500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notification_deliveries
        DROP CONSTRAINT ck_notification_deliveries_source,
        ADD CONSTRAINT ck_notification_deliveries_source CHECK (
          CASE WHEN payload IS NOT NULL
               THEN notification_id IS NULL AND user_id IS NULL AND type IS NULL AND original_id IS NULL
               ELSE user_id IS NOT NULL AND type IS NOT NULL
                    AND (notification_id IS NULL) = (type IN ('TEST', 'DIGEST'))
          END);
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notification_deliveries WHERE type = 'DIGEST';
      ALTER TABLE notification_deliveries
        DROP CONSTRAINT ck_notification_deliveries_source,
        ADD CONSTRAINT ck_notification_deliveries_source CHECK (
          CASE WHEN payload IS NOT NULL
               THEN notification_id IS NULL AND user_id IS NULL AND type IS NULL AND original_id IS NULL
               ELSE user_id IS NOT NULL AND type IS NOT NULL AND (notification_id IS NULL) = (type = 'TEST')
          END);
    `);
  }
}
