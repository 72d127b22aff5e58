import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Live inbox tickets may reopen their stream until they expire (a browser's EventSource reconnects with the
 * same URL after a restart): an open stream remembers the ticket that opened it, at most one per ticket, so a
 * new stream on the ticket replaces the one it opened before.
 */
export class ReopenableStreamTickets1764001600000 implements MigrationInterface {
  name = 'ReopenableStreamTickets1764001600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notification_streams ADD COLUMN ticket_hash bytea;
      CREATE UNIQUE INDEX ux_notification_streams_ticket ON notification_streams (ticket_hash)
        WHERE ticket_hash IS NOT NULL;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP INDEX ux_notification_streams_ticket;
      ALTER TABLE notification_streams DROP COLUMN ticket_hash;
    `);
  }
}
