import { MigrationInterface, QueryRunner } from 'typeorm';
import { setNotificationTypes } from './lib/notification-types';

/**
 * Per-member due-date extensions and their TASK_EXTENDED notice.
 *
 * An extension references the membership, so leaving or being removed from the class drops it (ON DELETE
 * CASCADE); `class_id` is the task's class, copied in when the extension is written.
 */
export class TaskExtensions1764000100000 implements MigrationInterface {
  name = 'TaskExtensions1764000100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE task_extensions (
        task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        class_id uuid NOT NULL,
        due_at timestamptz NOT NULL,
        allow_late_submission boolean,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, user_id),
        CONSTRAINT fk_task_extensions_member FOREIGN KEY (class_id, user_id)
          REFERENCES class_members (class_id, user_id) ON DELETE CASCADE
      );
      -- The cascade from a membership, and the reminder scan for extended deadlines coming due.
      CREATE INDEX ix_task_extensions_member ON task_extensions (class_id, user_id);
      CREATE INDEX ix_task_extensions_due ON task_extensions (due_at);

      -- TASK_EXTENDED carries the member's new deadline beside the class-wide due_at.
      ALTER TABLE notifications ADD COLUMN my_due_at timestamptz;
      ALTER TABLE notifications ADD CONSTRAINT ck_notifications_extended_due
        CHECK (type <> 'TASK_EXTENDED' OR my_due_at IS NOT NULL);
    `);
    await setNotificationTypes(queryRunner, (types) => [...types, 'TASK_EXTENDED']);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notifications WHERE type = 'TASK_EXTENDED';
      ALTER TABLE notifications DROP CONSTRAINT ck_notifications_extended_due;
      ALTER TABLE notifications DROP COLUMN my_due_at;
      DROP TABLE task_extensions;
    `);
    await setNotificationTypes(queryRunner, (types) => types.filter((type) => type !== 'TASK_EXTENDED'));
  }
}
