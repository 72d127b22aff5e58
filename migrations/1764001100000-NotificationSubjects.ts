import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Notifications about something other than a task (a class, or a row of another module): `task_id` and
 * `task_title` become optional (both or neither), `subject_id` names the other module's row, and `data` holds
 * what a type adds to the webhook `data`. A type may be up to 30 characters, as in the delivery log.
 *
 * One notification per (type, subject row, recipient): the unique key that makes a fan-out about such a row
 * happen once, whichever instance or transaction runs it.
 */
export class NotificationSubjects1764001100000 implements MigrationInterface {
  name = 'NotificationSubjects1764001100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications
        ALTER COLUMN type TYPE varchar(30),
        ALTER COLUMN task_id DROP NOT NULL,
        ALTER COLUMN task_title DROP NOT NULL,
        ADD COLUMN subject_id uuid,
        ADD COLUMN data jsonb,
        ADD CONSTRAINT ck_notifications_task_title CHECK ((task_id IS NULL) = (task_title IS NULL));
      CREATE UNIQUE INDEX uq_notifications_subject ON notifications (type, subject_id, user_id)
        WHERE subject_id IS NOT NULL;
      -- TASK_EXTENDED keeps the member's deadline in the webhook data as the type's own field.
      UPDATE notifications
         SET data = jsonb_build_object('myDueAt',
                                       to_char(my_due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
       WHERE type = 'TASK_EXTENDED';
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notifications WHERE task_id IS NULL;
      DROP INDEX uq_notifications_subject;
      ALTER TABLE notifications
        DROP CONSTRAINT ck_notifications_task_title,
        DROP COLUMN data,
        DROP COLUMN subject_id,
        ALTER COLUMN task_title SET NOT NULL,
        ALTER COLUMN task_id SET NOT NULL,
        ALTER COLUMN type TYPE varchar(20);
    `);
  }
}
