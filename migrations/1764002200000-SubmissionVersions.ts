import { MigrationInterface, QueryRunner } from 'typeorm';
import { setNotificationTypes } from './lib/notification-types';

/**
 * Submission history and return for revision.
 *
 * - `submissions.version` (the current version's number), `version_started_at` (writes within the amend window
 *   of it amend the version) and `status` (SUBMITTED, RETURNED, RESUBMITTED).
 * - `submission_versions`: one row per version, the current one included (its content and the time of its last
 *   write), written in the statement that writes the submission; (submission, version) is unique, so two
 *   concurrent writes can never make two versions of one number.
 * - `submission_attachments.added_version`: the version an attachment was added in. An attachment removed from
 *   the current version while an older version holds it moves to `submission_attachment_history` with the
 *   version that removed it: its file stays stored, readable and counted against its submitter's quota until
 *   the submission itself goes. A file key is in exactly one of the two tables.
 * - The notification type SUBMISSION_RETURNED.
 * - `ix_submissions_user` covers what the gradebook's cells read, so a page of members reads index pages only.
 *
 * Existing submissions become version 1, SUBMITTED, their content and attachments that version's.
 */
export class SubmissionVersions1764002200000 implements MigrationInterface {
  name = 'SubmissionVersions1764002200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE submissions
        ADD COLUMN version integer NOT NULL DEFAULT 1 CONSTRAINT ck_submissions_version CHECK (version >= 1),
        ADD COLUMN version_started_at timestamptz(3) NOT NULL DEFAULT now(),
        ADD COLUMN status varchar(12) NOT NULL DEFAULT 'SUBMITTED'
          CONSTRAINT ck_submissions_status CHECK (status IN ('SUBMITTED', 'RETURNED', 'RESUBMITTED'));
      UPDATE submissions SET version_started_at = first_submitted_at;
      -- A member's submissions with what a gradebook cell shows, read from the index alone.
      DROP INDEX ix_submissions_user;
      CREATE INDEX ix_submissions_user ON submissions (user_id, task_id)
        INCLUDE (status, score, first_submitted_at, released_at, version);

      CREATE TABLE submission_versions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        submission_id uuid NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        content text,
        submitted_at timestamptz(3) NOT NULL,
        CONSTRAINT uq_submission_versions_number UNIQUE (submission_id, version)
      );
      INSERT INTO submission_versions (submission_id, version, content, submitted_at)
      SELECT id, 1, content, last_updated_at FROM submissions;

      ALTER TABLE submission_attachments ADD COLUMN added_version integer NOT NULL DEFAULT 1;

      CREATE TABLE submission_attachment_history (
        id uuid PRIMARY KEY,
        submission_id uuid NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
        file_key varchar(64) NOT NULL,
        original_name varchar(255) NOT NULL,
        mime_type varchar(255),
        size_bytes bigint,
        created_at timestamptz(3) NOT NULL,
        added_version integer NOT NULL,
        removed_version integer NOT NULL,
        CONSTRAINT uq_submission_attachment_history_file_key UNIQUE (file_key),
        CONSTRAINT ck_submission_attachment_history_versions CHECK (added_version < removed_version)
      );
      CREATE INDEX ix_submission_attachment_history_submission
        ON submission_attachment_history (submission_id, created_at);
    `);
    await setNotificationTypes(queryRunner, (types) => [...types, 'SUBMISSION_RETURNED']);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DELETE FROM notifications WHERE type = 'SUBMISSION_RETURNED';
      DROP TABLE submission_attachment_history;
      ALTER TABLE submission_attachments DROP COLUMN added_version;
      DROP TABLE submission_versions;
      DROP INDEX ix_submissions_user;
      ALTER TABLE submissions DROP COLUMN status, DROP COLUMN version_started_at, DROP COLUMN version;
      CREATE INDEX ix_submissions_user ON submissions (user_id);
    `);
    await setNotificationTypes(queryRunner, (types) =>
      types.filter((type) => type !== 'SUBMISSION_RETURNED'),
    );
  }
}
