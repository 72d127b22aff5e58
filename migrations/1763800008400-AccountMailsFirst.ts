import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery worker claims account e-mails (deliveries without a notification) before notification
 * deliveries, so a verification or reset mail never waits behind the fan-out of a publication. The ready
 * index carries that order, and the claim stays an ordered index scan.
 */
export class AccountMailsFirst1763800008400 implements MigrationInterface {
  name = 'AccountMailsFirst1763800008400';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX ix_notification_deliveries_claim
        ON notification_deliveries (channel, (notification_id IS NOT NULL), next_attempt_at)
        WHERE status = 'PENDING';
      DROP INDEX ix_notification_deliveries_ready;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX ix_notification_deliveries_ready ON notification_deliveries (channel, next_attempt_at)
        WHERE status = 'PENDING';
      DROP INDEX ix_notification_deliveries_claim;
    `);
  }
}
