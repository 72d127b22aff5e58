import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Login throttling counters shared by every instance, and indexes for the hourly clean-up of expired
 * account rows (tokens, e-mail sends, throttling windows).
 */
export class AccountThrottling1763800001000 implements MigrationInterface {
  name = 'AccountThrottling1763800001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      -- Unlogged: counters are short-lived and cheap to lose on a crash; no WAL per login attempt.
      CREATE UNLOGGED TABLE throttler_hits (
        key varchar(128) PRIMARY KEY,
        hits integer NOT NULL,
        window_ends_at timestamptz NOT NULL,
        blocked_until timestamptz
      );
      CREATE INDEX ix_throttler_hits_window ON throttler_hits (window_ends_at);
      CREATE INDEX ix_auth_tokens_expires ON auth_tokens (expires_at);
      CREATE INDEX ix_email_sends_time ON email_sends (created_at);
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP INDEX ix_email_sends_time;
      DROP INDEX ix_auth_tokens_expires;
      DROP TABLE throttler_hits;
    `);
  }
}
