import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `write_committed`: set by the keyed request's own transaction, so a key whose write committed is never run
 * again, whatever happens to its answer. `response_withheld`: the answer carried credentials and only its
 * status is kept.
 */
export class IdempotencyCommittedWrites1764001200000 implements MigrationInterface {
  name = 'IdempotencyCommittedWrites1764001200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE idempotency_keys
        ADD COLUMN write_committed boolean NOT NULL DEFAULT false,
        ADD COLUMN response_withheld boolean NOT NULL DEFAULT false;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE idempotency_keys DROP COLUMN write_committed, DROP COLUMN response_withheld;
    `);
  }
}
