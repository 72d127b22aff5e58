import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tells every instance's token-user cache (`src/auth/auth-user.cache.ts`) which user changed: a notification
 * on `auth_user_changed` with the user's id when a user row is deleted or when a column that login tokens
 * depend on changes. PostgreSQL delivers notifications at commit, so every writer (the service, the CLI,
 * cascades, hand-written SQL) invalidates, and a rolled-back change does not.
 */
export class AuthUserChangeNotify1763800007000 implements MigrationInterface {
  name = 'AuthUserChangeNotify1763800007000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION notify_auth_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_user_changed', OLD.id::text);
        RETURN NULL;
      END
      $$;

      CREATE TRIGGER users_auth_changed_update AFTER UPDATE ON users
        FOR EACH ROW
        WHEN (OLD.token_version IS DISTINCT FROM NEW.token_version
          OR OLD.is_active IS DISTINCT FROM NEW.is_active
          OR OLD.email IS DISTINCT FROM NEW.email
          OR OLD.timezone IS DISTINCT FROM NEW.timezone)
        EXECUTE FUNCTION notify_auth_user_changed();
      CREATE TRIGGER users_auth_changed_delete AFTER DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION notify_auth_user_changed();
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TRIGGER users_auth_changed_delete ON users;
      DROP TRIGGER users_auth_changed_update ON users;
      DROP FUNCTION notify_auth_user_changed();
    `);
  }
}
