import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Grade release (CONTRACT §5.3): a task's `grade_release` mode, a submission's `released_at`, and the
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
    await this.setNotificationTypes(queryRunner, (types) => [...types, 'GRADE_RELEASED']);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notifications WHERE type = 'GRADE_RELEASED';
      DROP INDEX uq_notifications_grade_released;
      ALTER TABLE submissions DROP COLUMN released_at;
      ALTER TABLE tasks DROP COLUMN grade_release;
    `);
    await this.setNotificationTypes(queryRunner, (types) =>
      types.filter((type) => type !== 'GRADE_RELEASED'),
    );
  }

  /**
   * Rewrites the list of `notifications.type` from the one in force, so migrations of other features that add
   * their own type (in either order) keep theirs.
   */
  private async setNotificationTypes(
    queryRunner: QueryRunner,
    change: (types: string[]) => string[],
  ): Promise<void> {
    const [{ definition }] = (await queryRunner.query(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'notifications'::regclass AND conname = 'notifications_type_check'`,
    )) as { definition: string }[];
    const current = [...definition.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]);
    const types = [...new Set(change(current))].map((type) => `'${type}'`).join(', ');
    await queryRunner.query(`
      ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
      ALTER TABLE notifications ADD CONSTRAINT notifications_type_check CHECK (type IN (${types}));
    `);
  }
}
