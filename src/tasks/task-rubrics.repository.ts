import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { isoSql } from '../common/utils/time';
import { Db, one, rows } from '../database/sql';
import { Tx } from '../database/transactions';

/** A level as a rubric read answers it (inside the criterion's JSON: `points` is a JSON number). */
export interface RubricLevelJson {
  id: string;
  title: string;
  points: number;
}

export interface RubricCriterionJson {
  id: string;
  title: string;
  description: string | null;
  levels: RubricLevelJson[];
}

/** A task's rubric; timestamps already the JSON strings (`isoSql`), `max_points` numeric as a string. */
export interface RubricRow {
  task_id: string;
  criteria: RubricCriterionJson[];
  max_points: string;
  created_at: string;
  updated_at: string;
}

/** The ids of a rubric's parts now, as a replacement plans from them. */
export interface RubricIdsRow {
  criterion_id: string;
  level_ids: string[];
}

/** A criterion as a replacement writes it: `position` is its place in the rubric. */
export interface CriterionWrite {
  id: string;
  position: number;
  title: string;
  description: string | null;
}

/** A level as a replacement writes it: `position` is its place by points, highest first. */
export interface LevelWrite {
  id: string;
  criterionId: string;
  position: number;
  title: string;
  points: number;
}

/**
 * The rubric of task `$1`, one row: criteria in their order, each with its levels by points (highest first).
 * No row when the task has none.
 */
const RUBRIC = `
  SELECT r.task_id, t.rubric_max_points AS max_points, ${isoSql('r.created_at')} AS created_at,
         ${isoSql('r.updated_at')} AS updated_at,
         COALESCE((
           SELECT json_agg(json_build_object(
                    'id', c.id, 'title', c.title, 'description', c.description,
                    'levels', (SELECT json_agg(json_build_object('id', l.id, 'title', l.title, 'points', l.points)
                                               ORDER BY l.position)
                                 FROM rubric_levels l WHERE l.criterion_id = c.id))
                  ORDER BY c.position)
             FROM rubric_criteria c WHERE c.task_id = r.task_id), '[]') AS criteria
    FROM task_rubrics r JOIN tasks t ON t.id = r.task_id
   WHERE r.task_id = $1`;

/**
 * Rubrics of tasks: `task_rubrics`, `rubric_criteria`, `rubric_levels` and the task's `rubric_max_points`.
 * The assessments that use them belong to the submissions; the foreign keys from those to the parts here
 * refuse a replacement that would remove or change a used part (RUBRIC_IN_USE, see constraint-errors).
 */
@Injectable()
export class TaskRubricsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  find(taskId: string, db: Db = this.dataSource): Promise<RubricRow | null> {
    return one<RubricRow>(db, RUBRIC, [taskId]);
  }

  /**
   * Locks the live task's row until `tx` ends, before any rubric row: gradings share-lock the task row first,
   * so a replacement waits for the assessments in flight and they wait for it. False when the task is gone.
   */
  async lockTask(tx: Tx, taskId: string): Promise<boolean> {
    const found = await rows(
      tx,
      `SELECT 1 FROM tasks WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE`,
      [taskId],
    );
    return found.length > 0;
  }

  /** The ids of the criteria of the task's rubric and of their levels. */
  currentIds(tx: Tx, taskId: string): Promise<RubricIdsRow[]> {
    return rows<RubricIdsRow>(
      tx,
      `SELECT c.id AS criterion_id, COALESCE(array_agg(l.id) FILTER (WHERE l.id IS NOT NULL), '{}') AS level_ids
         FROM rubric_criteria c LEFT JOIN rubric_levels l ON l.criterion_id = c.id
        WHERE c.task_id = $1
        GROUP BY c.id`,
      [taskId],
    );
  }

  /**
   * Writes the rubric `criteria`/`levels` as the whole rubric of the task: parts not listed go, listed ones
   * are created or updated, and the task's `rubric_max_points` becomes the sum of each criterion's highest
   * level. A used part removed, or a used
   * level's points changed, fails on the assessments' foreign keys: 409 RUBRIC_IN_USE, nothing written.
   */
  async replace(tx: Tx, taskId: string, criteria: CriterionWrite[], levels: LevelWrite[]): Promise<void> {
    await withConstraintErrors(async () => {
      await rows(
        tx,
        `INSERT INTO task_rubrics AS r (task_id) VALUES ($1)
         ON CONFLICT (task_id) DO UPDATE SET updated_at = now()::timestamptz(3)`,
        [taskId],
      );
      await rows(
        tx,
        `DELETE FROM rubric_levels l USING rubric_criteria c
          WHERE l.criterion_id = c.id AND c.task_id = $1 AND l.id <> ALL($2::uuid[])`,
        [taskId, levels.map((level) => level.id)],
      );
      await rows(tx, `DELETE FROM rubric_criteria WHERE task_id = $1 AND id <> ALL($2::uuid[])`, [
        taskId,
        criteria.map((criterion) => criterion.id),
      ]);
      // A kept criterion or level is one of this rubric's (the service keeps no other id), so the update
      // never moves a row of another task or criterion.
      await rows(
        tx,
        `INSERT INTO rubric_criteria AS c (id, task_id, position, title, description)
         SELECT i.id, $1, i.position, i.title, i.description
           FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[]) AS i(id, position, title, description)
         ON CONFLICT (id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
                                        description = EXCLUDED.description
          WHERE c.task_id = EXCLUDED.task_id`,
        [
          taskId,
          criteria.map((criterion) => criterion.id),
          criteria.map((criterion) => criterion.position),
          criteria.map((criterion) => criterion.title),
          criteria.map((criterion) => criterion.description),
        ],
      );
      await rows(
        tx,
        `INSERT INTO rubric_levels AS l (id, criterion_id, position, title, points)
         SELECT i.id, i.criterion_id, i.position, i.title, i.points
           FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::numeric[])
                AS i(id, criterion_id, position, title, points)
         ON CONFLICT (id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
                                        points = EXCLUDED.points
          WHERE l.criterion_id = EXCLUDED.criterion_id`,
        [
          levels.map((level) => level.id),
          levels.map((level) => level.criterionId),
          levels.map((level) => level.position),
          levels.map((level) => level.title),
          levels.map((level) => level.points),
        ],
      );
      await rows(
        tx,
        `UPDATE tasks SET rubric_max_points = (
           SELECT sum(top.points) FROM (
             SELECT max(l.points) AS points FROM rubric_criteria c JOIN rubric_levels l ON l.criterion_id = c.id
              WHERE c.task_id = $1 GROUP BY c.id) top)
          WHERE id = $1`,
        [taskId],
      );
    });
  }

  /**
   * Removes the task's rubric (its criteria and levels go with it) and clears `rubric_max_points`; false when
   * there was none. A rubric an assessment uses stays: 409 RUBRIC_IN_USE.
   */
  async remove(tx: Tx, taskId: string): Promise<boolean> {
    return withConstraintErrors(async () => {
      const gone = await rows(tx, `DELETE FROM task_rubrics WHERE task_id = $1 RETURNING 1`, [taskId]);
      if (gone.length === 0) return false;
      await rows(tx, `UPDATE tasks SET rubric_max_points = NULL WHERE id = $1`, [taskId]);
      return true;
    });
  }
}
