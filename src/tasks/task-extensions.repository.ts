import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isoSql } from '../common/utils/time';
import { Db, one, rows } from '../database/sql';
import { Tx } from '../database/transactions';

/** An extension with its member's nickname; timestamps already the JSON strings (`isoSql`). */
export interface ExtensionRow {
  task_id: string;
  user_id: string;
  nickname: string | null;
  due_at: string;
  allow_late_submission: boolean | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ExtensionWrite {
  taskId: string;
  userId: string;
  classId: string;
  dueAt: Date;
  allowLateSubmission: boolean | null;
  createdBy: string;
}

/** Columns of an extension `e` and its member `u`. */
const EXTENSION_COLUMNS = `e.task_id, e.user_id, u.nickname, ${isoSql('e.due_at')} AS due_at,
  e.allow_late_submission, e.created_by, ${isoSql('e.created_at')} AS created_at,
  ${isoSql('e.updated_at')} AS updated_at`;

/** The members' own deadlines of tasks (table `task_extensions`). */
@Injectable()
export class TaskExtensionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The task's dueAt, with the task row share-locked until the transaction ends, so dueAt cannot move while an
   * extension is judged against it; null when the task is gone or deleted.
   */
  lockTaskDue(db: Tx, taskId: string): Promise<{ due_at: Date | null } | null> {
    return one(db, `SELECT due_at FROM tasks WHERE id = $1 AND deleted_at IS NULL FOR SHARE`, [taskId]);
  }

  /**
   * Locks the membership of `userId` in the class until the transaction ends: writes of one member's extensions
   * run one at a time (each sees the one before), and the member cannot leave meanwhile. False when not a member.
   */
  async lockMember(db: Tx, classId: string, userId: string): Promise<boolean> {
    const locked = await rows(
      db,
      `SELECT 1 FROM class_members WHERE class_id = $1 AND user_id = $2 FOR NO KEY UPDATE`,
      [classId, userId],
    );
    return locked.length > 0;
  }

  /**
   * Creates or replaces the extension (its creator and creation time stay; updatedAt moves only when something
   * changed); `dueChanged` when it is new or its dueAt moved. The caller holds the member lock (`lockMember`),
   * so the previous state read here is the latest.
   */
  async upsert(db: Db, write: ExtensionWrite): Promise<{ extension: ExtensionRow; dueChanged: boolean }> {
    const row = await one<ExtensionRow & { due_changed: boolean }>(
      db,
      `WITH previous AS (
         SELECT due_at FROM task_extensions WHERE task_id = $1 AND user_id = $2
       ), e AS (
         INSERT INTO task_extensions AS x (task_id, user_id, class_id, due_at, allow_late_submission, created_by)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (task_id, user_id) DO UPDATE SET
           due_at = EXCLUDED.due_at,
           allow_late_submission = EXCLUDED.allow_late_submission,
           updated_at = CASE
             WHEN (x.due_at, x.allow_late_submission) IS DISTINCT FROM (EXCLUDED.due_at, EXCLUDED.allow_late_submission)
             THEN now() ELSE x.updated_at END
         RETURNING x.*
       )
       SELECT ${EXTENSION_COLUMNS}, previous.due_at IS DISTINCT FROM e.due_at AS due_changed
         FROM e JOIN users u ON u.id = e.user_id LEFT JOIN previous ON true`,
      [write.taskId, write.userId, write.classId, write.dueAt, write.allowLateSubmission, write.createdBy],
    );
    const { due_changed: dueChanged, ...extension } = row!;
    return { extension, dueChanged };
  }

  /** False when the member has no extension of the task. */
  async remove(taskId: string, userId: string): Promise<boolean> {
    const removed = await rows(
      this.dataSource,
      `DELETE FROM task_extensions WHERE task_id = $1 AND user_id = $2 RETURNING 1`,
      [taskId, userId],
    );
    return removed.length > 0;
  }

  /** By nickname (the e-mail when there is none), case-insensitive; then by user id so the order is total. */
  list(taskId: string): Promise<ExtensionRow[]> {
    return rows(
      this.dataSource,
      `SELECT ${EXTENSION_COLUMNS}
         FROM task_extensions e JOIN users u ON u.id = e.user_id
        WHERE e.task_id = $1
        ORDER BY lower(COALESCE(NULLIF(u.nickname, ''), u.email)), u.id`,
      [taskId],
    );
  }
}
