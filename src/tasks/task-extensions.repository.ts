import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { memberDueAtSql, memberSeesTaskSql } from '../access/task-rules.sql';
import { isoSql } from '../common/utils/time';
import { Db, one, rows } from '../database/sql';
import { Tx } from '../database/transactions';
import { compileFanOut } from '../notifications/production/notification-fan-out';
import { defineNotificationType, localTime } from '../notifications/production/notification-types';
import { Notifier } from '../notifications/production/notifier';

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

/** A member's own deadline was set or moved; out of date once it changed again or is gone. */
export const TASK_EXTENDED = defineNotificationType({
  name: 'TASK_EXTENDED',
  subject: 'task',
  texts: ({ deadline }: Record<'deadline', string>) => ({
    title: `format('Extension: %s is now due %s for you', t.title, ${localTime(deadline)})`,
    content: `format('Your deadline for "%s" in %s is now %s.', t.title, c.name, ${localTime(deadline)})`,
  }),
  staleWhen: [
    {
      when: `${memberDueAtSql('t', 'n.user_id')} IS DISTINCT FROM n.my_due_at`,
      reason: 'not sent: the extension changed',
    },
  ],
});

/**
 * TASK_EXTENDED to the member of the extension of (`$1` task, `$2` member), while the task is visible to members
 * and the member active; nothing otherwise. Its webhook `data` adds the member's deadline, `myDueAt`.
 */
const EXTENDED = compileFanOut({
  type: TASK_EXTENDED,
  from: 'task_extensions e',
  subject: { task: 'e.task_id' },
  recipients: { user: 'e.user_id' },
  where: `e.task_id = $1 AND e.user_id = $2 AND ${memberSeesTaskSql('t')} AND t.deleted_at IS NULL`,
  columns: { myDueAt: 'e.due_at' },
  data: `jsonb_build_object('myDueAt', ${isoSql('e.due_at')})`,
  vars: { deadline: 'e.due_at' },
});

/** The members' own deadlines of tasks (table `task_extensions`). */
@Injectable()
export class TaskExtensionsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifier: Notifier,
  ) {}

  /** TASK_EXTENDED to the member of the extension just written, in its transaction `db` (see EXTENDED). */
  async notifyExtended(db: Db, taskId: string, userId: string): Promise<void> {
    await this.notifier.produce(db, EXTENDED, [taskId, userId]);
  }

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
             THEN now()::timestamptz(3) ELSE x.updated_at END
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
