import { MigrationInterface, QueryRunner } from 'typeorm';

/** The constraint PostgreSQL named for the inline `type IN (...)` check of `notifications`. */
const TYPE_CHECK = 'notifications_type_check';
const COMMENT_TYPE = 'TASK_COMMENT';

/**
 * Task comments, and their notification type `TASK_COMMENT`.
 *
 * A reply names a comment of the same task: the foreign key `(task_id, reply_to_id)` makes that a rule of
 * the table, and deleting the replied-to comment only clears `reply_to_id` of its replies. Comments go with
 * their task and their author. The list reads `ix_task_comments_list` in (created_at, id) order.
 *
 * A TASK_COMMENT notification names its comment; deleting the comment withdraws its notifications (and their
 * deliveries), so a removed text is neither in inboxes nor sent later.
 *
 * Other branches add notification types too: the type check is rewritten from the list it has now, plus or
 * minus this one type, so those migrations compose in any order.
 */
export class TaskComments1764000400000 implements MigrationInterface {
  name = 'TaskComments1764000400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE task_comments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        reply_to_id uuid,
        content text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_task_comments_task_comment UNIQUE (task_id, id),
        CONSTRAINT fk_task_comments_reply_to FOREIGN KEY (task_id, reply_to_id)
          REFERENCES task_comments (task_id, id) ON DELETE SET NULL (reply_to_id)
      );
      CREATE INDEX ix_task_comments_list ON task_comments (task_id, created_at, id);
      CREATE INDEX ix_task_comments_reply_to ON task_comments (reply_to_id) WHERE reply_to_id IS NOT NULL;

      ALTER TABLE notifications
        ADD COLUMN comment_id uuid CONSTRAINT fk_notifications_comment REFERENCES task_comments (id) ON DELETE CASCADE;
      CREATE UNIQUE INDEX uq_notifications_comment ON notifications (comment_id, user_id) WHERE comment_id IS NOT NULL;
    `);
    await this.rewriteTypeCheck(queryRunner, (types) => [...types, COMMENT_TYPE]);
    await queryRunner.query(`
      ALTER TABLE notifications ADD CONSTRAINT ck_notifications_comment
        CHECK ((type = '${COMMENT_TYPE}') = (comment_id IS NOT NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE notifications DROP CONSTRAINT ck_notifications_comment;
      DELETE FROM notifications WHERE type = '${COMMENT_TYPE}';
    `);
    await this.rewriteTypeCheck(queryRunner, (types) => types.filter((type) => type !== COMMENT_TYPE));
    await queryRunner.query(`
      DROP INDEX uq_notifications_comment;
      ALTER TABLE notifications DROP COLUMN comment_id;
      DROP TABLE task_comments;
    `);
  }

  /** Replaces the allowed notification types with `change(current types)`. */
  private async rewriteTypeCheck(
    queryRunner: QueryRunner,
    change: (types: string[]) => string[],
  ): Promise<void> {
    const [check] = (await queryRunner.query(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = 'notifications'::regclass AND conname = $1`,
      [TYPE_CHECK],
    )) as { definition: string }[];
    const current = [...check.definition.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]);
    const types = [...new Set(change(current))].map((type) => `'${type}'`).join(', ');
    await queryRunner.query(`
      ALTER TABLE notifications DROP CONSTRAINT ${TYPE_CHECK};
      ALTER TABLE notifications ADD CONSTRAINT ${TYPE_CHECK} CHECK (type IN (${types}));
    `);
  }
}
