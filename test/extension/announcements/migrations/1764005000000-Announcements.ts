import { MigrationInterface, QueryRunner } from 'typeorm';
import { setNotificationTypes } from '../../../../migrations/lib/notification-types';

const POSTED_TYPE = 'ANNOUNCEMENT_POSTED';

/**
 * The example extension's table and its notification type `ANNOUNCEMENT_POSTED` (added to the database
 * check with `setNotificationTypes`, like every type's migration). An announcement goes with its class and
 * its author's account; the list reads `ix_announcements_list` backwards, newest first.
 */
export class Announcements1764005000000 implements MigrationInterface {
  name = 'Announcements1764005000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE announcements (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        class_id uuid NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        title text NOT NULL,
        body text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE INDEX ix_announcements_list ON announcements (class_id, created_at, id);
      CREATE INDEX ix_announcements_author ON announcements (author_id);
    `);
    await setNotificationTypes(queryRunner, (types) => [...types, POSTED_TYPE]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM notifications WHERE type = '${POSTED_TYPE}'`);
    await setNotificationTypes(queryRunner, (types) => types.filter((type) => type !== POSTED_TYPE));
    await queryRunner.query(`DROP TABLE announcements`);
  }
}
