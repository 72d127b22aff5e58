import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import { DataSource } from 'typeorm';
import { extendedDueAtSql, memberSeesTaskSql } from '../access/task-rules.sql';
import { ClassRole } from '../classes/entities/class-member.entity';
import { isoSql } from '../common/utils/time';
import { one, Prepared } from '../database/sql';
import { SubmissionStatus } from './entities/submission.entity';

/** A column of the gradebook, as the JSON reads build it. */
export interface GradebookTaskJson {
  id: string;
  title: string;
  dueAt: string | null;
  /** The rubric's maximum (numeric as a JSON number); null without a rubric. */
  maxPoints: number | null;
}

export type GradebookCellStatus = 'NOT_DUE' | 'MISSING' | 'SUBMITTED' | 'RETURNED' | 'GRADED';

export interface GradebookCellJson {
  taskId: string;
  status: GradebookCellStatus;
  score: number | null;
  isLate: boolean;
  releasedAt: string | null;
  version: number | null;
}

/** A member's row as the statements build it; `email` only for the avatar hash, the sort keys for the cursor. */
export interface GradebookRowJson {
  userId: string;
  nickname: string | null;
  email: string;
  studentId: string | null;
  cells: GradebookCellJson[];
  graded: number;
  totalScore: number;
  sortLower: string;
  sortName: string;
}

export interface GradebookPageRow {
  tasks: GradebookTaskJson[];
  rows: GradebookRowJson[];
}

export interface GradebookOwnRow {
  tasks: GradebookTaskJson[];
  row: GradebookRowJson;
}

/** Where a page of rows starts: after the member of these sort keys. */
export interface GradebookPlace {
  sortLower: string;
  sortName: string;
  userId: string;
}

export interface GradebookColumn {
  id: string;
  title: string;
}

/** One line of the gradebook CSV: the member and the text of each cell, in the columns' order. */
export interface GradebookCsvRow {
  displayName: string;
  studentId: string | null;
  cells: (string | null)[];
}

/** Display name (alias `u` = users): the nickname, else the e-mail address. */
const DISPLAY_NAME = `COALESCE(NULLIF(u.nickname, ''), u.email)`;

/**
 * The gradebook's columns (alias `t`): the published, started tasks of class `$1` that are not deleted (no
 * drafts, nothing scheduled), by dueAt (none last), then creation; `ord` numbers them.
 */
const COLUMNS = `SELECT t.id, t.title, t.due_at, t.allow_late_submission, t.rubric_max_points,
         row_number() OVER (ORDER BY t.due_at NULLS LAST, t.created_at, t.id) AS ord
    FROM tasks t
   WHERE t.class_id = $1 AND t.deleted_at IS NULL AND ${memberSeesTaskSql('t')}`;

const TASKS_JSON = `(SELECT coalesce(json_agg(json_build_object('id', c.id, 'title', c.title,
            'dueAt', ${isoSql('c.due_at')}, 'maxPoints', c.rubric_max_points) ORDER BY c.ord), '[]')
     FROM cols c)`;

/**
 * The cells of member `member` (SQL of a user id) of class `$1` over the columns `cols`, and their `graded`
 * count and `total_score`, as a one-row subquery for `CROSS JOIN LATERAL`. The member's own deadline (their
 * extension's when later) decides MISSING and lateness. `releasedOnly`: a grade the submitter cannot see yet
 * counts as no grade (the submitter's own view). The member's submissions come from one range of
 * `ix_submissions_user`, which covers the columns read here, and their extensions from one of
 * `ix_task_extensions_member`: a page reads no submission row, whatever the class size.
 */
const gridSql = (member: string, releasedOnly: boolean): string => {
  const score = releasedOnly ? 'CASE WHEN s.released_at IS NOT NULL THEN s.score END' : 's.score';
  return `SELECT coalesce(json_agg(json_build_object(
             'taskId', c.id,
             'status', CASE WHEN s.user_id IS NULL
                              THEN CASE WHEN cell.due_at < now() THEN 'MISSING' ELSE 'NOT_DUE' END
                            WHEN s.status = '${SubmissionStatus.RETURNED}' THEN 'RETURNED'
                            WHEN cell.score IS NOT NULL THEN 'GRADED'
                            ELSE 'SUBMITTED' END,
             'score', cell.score,
             'isLate', coalesce(s.first_submitted_at > cell.due_at, false),
             'releasedAt', ${isoSql('s.released_at')},
             'version', s.version) ORDER BY c.ord), '[]') AS cells,
           count(cell.score)::int AS graded,
           coalesce(sum(cell.score), 0) AS total_score
      FROM cols c
      LEFT JOIN submissions s ON s.task_id = c.id AND s.user_id = ${member}
      LEFT JOIN task_extensions e ON e.class_id = $1 AND e.task_id = c.id AND e.user_id = ${member}
     CROSS JOIN LATERAL (SELECT ${score} AS score, ${extendedDueAtSql('c', 'e')} AS due_at) cell`;
};

/** A gradebook row as JSON (aliases: `p` the member's page row, `grid` its `gridSql`). */
const ROW_JSON = `json_build_object('userId', p.id, 'nickname', p.nickname, 'email', p.email,
    'studentId', p.student_id, 'cells', grid.cells, 'graded', grid.graded, 'totalScore', grid.total_score,
    'sortLower', p.sort_lower, 'sortName', p.sort_name)`;

/**
 * One page of the gradebook of class `$1` in one statement, which decides access too: no row unless the caller
 * `$6` is its OWNER or an ADMIN. Its columns, and `$2` MEMBERs by display name (case-insensitive, then as
 * written, then id) after the place `$3`, `$4`, `$5` (all null for the first page), each with every cell built
 * here. Grades unreleased included: the page is for OWNER and ADMIN.
 */
const PAGE = new Prepared(
  'gradebook.page',
  `WITH caller AS (
     SELECT 1 FROM class_members cm
      WHERE cm.class_id = $1 AND cm.user_id = $6 AND cm.role IN ('${ClassRole.OWNER}', '${ClassRole.ADMIN}')
   ),
   cols AS MATERIALIZED (${COLUMNS}),
   page AS (
     SELECT u.id, u.nickname, u.email, u.student_id, lower(${DISPLAY_NAME}) AS sort_lower, ${DISPLAY_NAME} AS sort_name
       FROM class_members m JOIN users u ON u.id = m.user_id
      WHERE m.class_id = $1 AND m.role = '${ClassRole.MEMBER}'
        AND ($3::text IS NULL OR (lower(${DISPLAY_NAME}), ${DISPLAY_NAME}, u.id) > ($3::text, $4::text, $5::uuid))
      ORDER BY lower(${DISPLAY_NAME}), ${DISPLAY_NAME}, u.id
      LIMIT $2)
   SELECT ${TASKS_JSON} AS tasks,
          (SELECT coalesce(json_agg(${ROW_JSON} ORDER BY p.sort_lower, p.sort_name, p.id), '[]')
             FROM page p CROSS JOIN LATERAL (${gridSql('p.id', false)}) grid) AS rows
     FROM caller`,
);

/**
 * The columns of class `$1` and the row of user `$2` with released grades only, in one statement; no row
 * unless the user is a member of the class (any role).
 */
const OWN_ROW = `WITH cols AS MATERIALIZED (${COLUMNS})
  SELECT ${TASKS_JSON} AS tasks,
         (SELECT ${ROW_JSON}
            FROM (SELECT u.id, u.nickname, u.email, u.student_id, lower(${DISPLAY_NAME}) AS sort_lower,
                         ${DISPLAY_NAME} AS sort_name
                    FROM users u WHERE u.id = m.user_id) p
           CROSS JOIN LATERAL (${gridSql('p.id', true)}) grid) AS row
    FROM class_members m
   WHERE m.class_id = $1 AND m.user_id = $2`;

/**
 * The CSV's lines: every MEMBER of class `$1` in the gradebook's order, each cell over the tasks `$2` (the
 * header's, in its order): the score, else `missing` past the member's deadline with nothing submitted, else
 * `late` for a late submission, else empty.
 */
const CSV_ROWS = `SELECT ${DISPLAY_NAME} AS "displayName", u.student_id AS "studentId",
       ARRAY(SELECT CASE WHEN s.score IS NOT NULL THEN trim_scale(s.score)::text
                         WHEN s.user_id IS NULL AND cell.due_at < now() THEN 'missing'
                         WHEN s.first_submitted_at > cell.due_at THEN 'late' END
               FROM unnest($2::uuid[]) WITH ORDINALITY AS col(id, ord)
               JOIN tasks c ON c.id = col.id
               LEFT JOIN submissions s ON s.task_id = c.id AND s.user_id = u.id
               LEFT JOIN task_extensions e ON e.class_id = $1 AND e.task_id = c.id AND e.user_id = u.id
              CROSS JOIN LATERAL (SELECT ${extendedDueAtSql('c', 'e')} AS due_at) cell
              ORDER BY col.ord) AS cells
  FROM class_members m JOIN users u ON u.id = m.user_id
 WHERE m.class_id = $1 AND m.role = '${ClassRole.MEMBER}'
 ORDER BY lower(${DISPLAY_NAME}), ${DISPLAY_NAME}, u.id`;

/** The class gradebook: its page, a member's own row, and the CSV. */
@Injectable()
export class GradebookRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * `rows` MEMBERs after `after` (the first ones when null), with the columns; one statement. Null unless
   * `callerId` is the class's OWNER or an ADMIN.
   */
  page(
    classId: string,
    callerId: string,
    after: GradebookPlace | null,
    rows: number,
  ): Promise<GradebookPageRow | null> {
    return one<GradebookPageRow>(this.dataSource, PAGE, [
      classId,
      rows,
      after?.sortLower ?? null,
      after?.sortName ?? null,
      after?.userId ?? null,
      callerId,
    ]);
  }

  /** The columns and user `userId`'s own row, released grades only; one statement. Null unless a member. */
  ownRow(classId: string, userId: string): Promise<GradebookOwnRow | null> {
    return one<GradebookOwnRow>(this.dataSource, OWN_ROW, [classId, userId]);
  }

  /** The columns of the class, in order, on the export's connection. */
  async columns(client: PoolClient, classId: string): Promise<GradebookColumn[]> {
    const { rows } = await client.query<GradebookColumn>(
      `WITH cols AS (${COLUMNS}) SELECT c.id, c.title FROM cols c ORDER BY c.ord`,
      [classId],
    );
    return rows;
  }

  /** The CSV's lines over the tasks `taskIds` from a cursor on `client`, `batchSize` rows per round trip. */
  csvRows(client: PoolClient, classId: string, taskIds: string[], batchSize: number): QueryStream {
    return client.query(new QueryStream(CSV_ROWS, [classId, taskIds], { batchSize }));
  }
}
