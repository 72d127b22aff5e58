import { MigrationInterface, QueryRunner } from 'typeorm';
import { setNotificationTypes } from './lib/notification-types';

/**
 * Grade release: a task's `grade_release` mode, a submission's `released_at`, and the
 * GRADE_RELEASED notice, at most one per submission (a submission is one per task and user, so the key is
 * the task and the submitter).
 */
export class GradeRelease1764000200000 implements MigrationInterface {
  name = 'GradeRelease1764000200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE tasks ADD COLUMN grade_release varchar(10) NOT NULL DEFAULT 'IMMEDIATE'
        CONSTRAINT ck_tasks_grade_release CHECK (grade_release IN ('IMMEDIATE', 'MANUAL'));
      ALTER TABLE submissions ADD COLUMN released_at timestamptz;
      -- Every task so far was IMMEDIATE: the grades given are out already (no notice for them).
      UPDATE submissions SET released_at = reviewed_at
       WHERE score IS NOT NULL OR feedback IS NOT NULL;
      CREATE UNIQUE INDEX uq_notifications_grade_released ON notifications (task_id, user_id)
        WHERE type = 'GRADE_RELEASED';
    `);
    await setNotificationTypes(queryRunner, (types) => [...types, 'GRADE_RELEASED']);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notifications WHERE type = 'GRADE_RELEASED';
      DROP INDEX uq_notifications_grade_released;
      ALTER TABLE submissions DROP COLUMN released_at;
      ALTER TABLE tasks DROP COLUMN grade_release;
    `);
    await setNotificationTypes(queryRunner, (types) => types.filter((type) => type !== 'GRADE_RELEASED'));
  }
}
