import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The answers kept for `Idempotency-Key`: one row per (user, key). A row without a
 * `response_status` is a request in flight; the primary key decides which of several concurrent requests runs.
 * The index serves the hourly clean-up of rows past their 24 hours.
 */
export class IdempotencyKeys1764000500000 implements MigrationInterface {
  name = 'IdempotencyKeys1764000500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        request_method varchar(7) NOT NULL,
        request_path text NOT NULL,
        request_fingerprint char(64),
        response_status smallint,
        response_content_type text,
        response_body text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      );
      CREATE INDEX idx_idempotency_keys_created_at ON idempotency_keys (created_at);
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
  }
}
