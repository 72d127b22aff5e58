import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Calendar feeds: at most one per user, found by the SHA-256 of its secret token, which is
 * never stored. A new token replaces the old one in place, so the old address stops working at once.
 */
export class CalendarFeeds1764000701000 implements MigrationInterface {
  name = 'CalendarFeeds1764000701000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE calendar_feeds (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        token_hash bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_calendar_feeds_token_hash UNIQUE (token_hash)
      );
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE calendar_feeds`);
  }
}
