import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-user storage quota: a user's total is the size of the task files they uploaded and of
 * their submission files, plus the bytes reserved by their uploads in flight. A task file's uploader is new:
 * files of earlier versions count to the task's creator.
 */
export class StorageQuota1764000800000 implements MigrationInterface {
  name = 'StorageQuota1764000800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE task_attachments ADD COLUMN uploaded_by uuid REFERENCES users(id) ON DELETE SET NULL;
      UPDATE task_attachments ta SET uploaded_by = t.created_by FROM tasks t WHERE t.id = ta.task_id;
      CREATE INDEX ix_task_attachments_uploaded_by ON task_attachments (uploaded_by) INCLUDE (size_bytes)
        WHERE uploaded_by IS NOT NULL;

      CREATE TABLE storage_reservations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        bytes bigint NOT NULL CHECK (bytes >= 0),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX ix_storage_reservations_user ON storage_reservations (user_id, created_at);
      CREATE INDEX ix_storage_reservations_created ON storage_reservations (created_at);
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TABLE storage_reservations;
      ALTER TABLE task_attachments DROP COLUMN uploaded_by;
    `);
  }
}
