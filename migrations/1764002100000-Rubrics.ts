import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rubrics: a task's criteria, each with levels worth points, and the assessment of a submission (one level per
 * criterion). `tasks.rubric_max_points` is the rubric's maximum (null: the task has no rubric), written in the
 * rubric's own transaction, so a task read answers `hasRubric` and `maxPoints` without another statement.
 *
 * A used part of a rubric cannot change under its assessments, whatever the service does: an assessment
 * references its level by (criterion, level, points) and its criterion by (task, criterion), so removing a
 * used criterion or level, moving a used level to another criterion, or changing a used level's points fails
 * on the foreign keys. They are NO ACTION rather than RESTRICT only so that deleting a whole task or user (its
 * submissions and its rubric in one cascade) is checked at the end of the statement, when the assessments are
 * gone too. An assessment names a submission of the same task as its criterion (`uq_submissions_task_id`).
 */
export class Rubrics1764002100000 implements MigrationInterface {
  name = 'Rubrics1764002100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE tasks ADD COLUMN rubric_max_points numeric(12, 2);

      CREATE TABLE task_rubrics (
        task_id uuid PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );

      CREATE TABLE rubric_criteria (
        id uuid PRIMARY KEY,
        task_id uuid NOT NULL REFERENCES task_rubrics (task_id) ON DELETE CASCADE,
        position smallint NOT NULL,
        title varchar(200) NOT NULL,
        description varchar(2000),
        CONSTRAINT uq_rubric_criteria_task_criterion UNIQUE (task_id, id)
      );

      CREATE TABLE rubric_levels (
        id uuid PRIMARY KEY,
        criterion_id uuid NOT NULL REFERENCES rubric_criteria (id) ON DELETE CASCADE,
        position smallint NOT NULL,
        title varchar(100) NOT NULL,
        points numeric(12, 2) NOT NULL CONSTRAINT ck_rubric_levels_points CHECK (points BETWEEN 0 AND 100000),
        CONSTRAINT uq_rubric_levels_criterion_level_points UNIQUE (criterion_id, id, points)
      );

      ALTER TABLE submissions ADD CONSTRAINT uq_submissions_task_id UNIQUE (task_id, id);

      CREATE TABLE rubric_assessments (
        submission_id uuid NOT NULL,
        task_id uuid NOT NULL,
        criterion_id uuid NOT NULL,
        level_id uuid NOT NULL,
        points numeric(12, 2) NOT NULL,
        comment varchar(2000),
        PRIMARY KEY (submission_id, criterion_id),
        CONSTRAINT fk_rubric_assessments_submission FOREIGN KEY (task_id, submission_id)
          REFERENCES submissions (task_id, id) ON DELETE CASCADE,
        CONSTRAINT fk_rubric_assessments_criterion FOREIGN KEY (task_id, criterion_id)
          REFERENCES rubric_criteria (task_id, id),
        CONSTRAINT fk_rubric_assessments_level FOREIGN KEY (criterion_id, level_id, points)
          REFERENCES rubric_levels (criterion_id, id, points)
      );
      -- The foreign-key checks of a criterion's or level's removal or change.
      CREATE INDEX ix_rubric_assessments_level ON rubric_assessments (criterion_id, level_id, points);
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TABLE rubric_assessments;
      ALTER TABLE submissions DROP CONSTRAINT uq_submissions_task_id;
      DROP TABLE rubric_levels;
      DROP TABLE rubric_criteria;
      DROP TABLE task_rubrics;
      ALTER TABLE tasks DROP COLUMN rubric_max_points;
    `);
  }
}
