import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `submittedCount` of a task (members who have submitted) kept as a counter, so that a task list reads one row
 * per task instead of joining every submission with the class's memberships (about 0.4 ms of PostgreSQL per
 * list of 30 tasks). Triggers keep it, so every path agrees: `submissions.counted` says whether a row is in
 * its task's count; it is while its author is a member. A first submission counts when its author is a member;
 * leaving uncounts the member's submissions in the class, joining again counts them; a deleted submission
 * leaves the count if it was in it. Deleting a user removes their memberships and submissions in one go, and
 * the flag keeps that right whichever of the two cascades the triggers see first.
 *
 * Concurrency: a new submission takes a KEY SHARE lock on its author's membership before counting itself, so a
 * concurrent removal of that membership either waits for the submission to commit (and then uncounts it) or
 * commits first (and the submission is not counted). Counter rows are changed in task order.
 */
export class TaskSubmissionCounts1763800006000 implements MigrationInterface {
  name = 'TaskSubmissionCounts1763800006000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE task_submission_counts (
        task_id uuid PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
        submitted_count integer NOT NULL
      );
      ALTER TABLE submissions ADD COLUMN counted boolean NOT NULL DEFAULT false;

      UPDATE submissions s SET counted = true
        FROM tasks t, class_members cm
       WHERE t.id = s.task_id AND cm.class_id = t.class_id AND cm.user_id = s.user_id;
      INSERT INTO task_submission_counts (task_id, submitted_count)
      SELECT task_id, count(*) FROM submissions WHERE counted GROUP BY task_id;

      -- Adds delta to the count of each of task_ids (once per occurrence), in task order: concurrent changes lock
      -- counter rows in the same order. Tasks deleted meanwhile are skipped (their counters went with them).
      CREATE FUNCTION add_submission_counts(task_ids uuid[], delta integer) RETURNS void LANGUAGE sql AS $$
        INSERT INTO task_submission_counts AS c (task_id, submitted_count)
        SELECT d.task_id, count(*) * delta
          FROM unnest(task_ids) AS d (task_id)
          JOIN tasks t ON t.id = d.task_id
         GROUP BY d.task_id
         ORDER BY d.task_id
        ON CONFLICT (task_id) DO UPDATE SET submitted_count = c.submitted_count + EXCLUDED.submitted_count
      $$;

      -- Per statement, so a bulk insert changes each counter row once (repeated updates of one row in one
      -- transaction pile up row versions).
      CREATE FUNCTION count_new_submissions() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        counted_task_ids uuid[];
      BEGIN
        WITH of_members AS (
          SELECT a.id
            FROM added a
            JOIN tasks t ON t.id = a.task_id
            JOIN class_members cm ON cm.class_id = t.class_id AND cm.user_id = a.user_id
             FOR KEY SHARE OF cm
        ), flagged AS (
          UPDATE submissions s SET counted = true FROM of_members m WHERE s.id = m.id RETURNING s.task_id
        )
        SELECT array_agg(task_id) INTO counted_task_ids FROM flagged;
        PERFORM add_submission_counts(counted_task_ids, 1);
        RETURN NULL;
      END $$;

      CREATE FUNCTION uncount_deleted_submissions() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM add_submission_counts(array_agg(task_id), -1) FROM gone WHERE counted;
        RETURN NULL;
      END $$;

      -- Members who join (again) count with the submissions they left behind; members who go, no longer.
      CREATE FUNCTION count_submissions_of_members() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        joined boolean := TG_OP = 'INSERT';
        flipped_task_ids uuid[];
      BEGIN
        WITH flipped AS (
          UPDATE submissions s SET counted = joined
            FROM changed m, tasks t
           WHERE t.class_id = m.class_id AND s.task_id = t.id AND s.user_id = m.user_id AND s.counted <> joined
          RETURNING s.task_id
        )
        SELECT array_agg(task_id) INTO flipped_task_ids FROM flipped;
        PERFORM add_submission_counts(flipped_task_ids, CASE WHEN joined THEN 1 ELSE -1 END);
        RETURN NULL;
      END $$;

      CREATE TRIGGER submissions_count_insert AFTER INSERT ON submissions
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_new_submissions();
      CREATE TRIGGER submissions_count_delete AFTER DELETE ON submissions
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION uncount_deleted_submissions();
      CREATE TRIGGER class_members_count_insert AFTER INSERT ON class_members
        REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_submissions_of_members();
      CREATE TRIGGER class_members_count_delete AFTER DELETE ON class_members
        REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_submissions_of_members();
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TRIGGER class_members_count_delete ON class_members;
      DROP TRIGGER class_members_count_insert ON class_members;
      DROP TRIGGER submissions_count_delete ON submissions;
      DROP TRIGGER submissions_count_insert ON submissions;
      DROP FUNCTION count_submissions_of_members();
      DROP FUNCTION uncount_deleted_submissions();
      DROP FUNCTION count_new_submissions();
      DROP FUNCTION add_submission_counts(uuid[], integer);
      DROP TABLE task_submission_counts;
      ALTER TABLE submissions DROP COLUMN counted;
    `);
  }
}
