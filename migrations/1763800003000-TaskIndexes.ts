import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes of the task queries: the published task list of a class (and `GET /tasks/mine`) ordered by due
 * time, and the reverse `blockedBy` lookup that removes a deleted task from the lists that name it.
 */
export class TaskIndexes1763800003000 implements MigrationInterface {
  name = 'TaskIndexes1763800003000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX ix_tasks_class_published_due ON tasks (class_id, due_at, created_at, id)
        WHERE is_published AND deleted_at IS NULL;
      CREATE INDEX ix_tasks_blocked_by ON tasks USING gin (blocked_by) WHERE deleted_at IS NULL;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP INDEX ix_tasks_blocked_by;
      DROP INDEX ix_tasks_class_published_due;
    `);
  }
}
