import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A password change revokes every login token of the user but the one that made the change: that token is
 * remembered by its SHA-256 hash and its token version, and stays valid beside the tokens of the new version
 * (see JwtStrategy). A password reset or a deactivation forgets it.
 */
export class PasswordChangeKeepsSession1764000300000 implements MigrationInterface {
  name = 'PasswordChangeKeepsSession1764000300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE users
        ADD COLUMN kept_token_hash varchar(64),
        ADD COLUMN kept_token_version integer,
        ADD CONSTRAINT ck_users_kept_token CHECK ((kept_token_hash IS NULL) = (kept_token_version IS NULL));
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE users
        DROP CONSTRAINT ck_users_kept_token,
        DROP COLUMN kept_token_version,
        DROP COLUMN kept_token_hash;
    `);
  }
}
