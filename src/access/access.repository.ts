import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db, one, Prepared, rows } from '../database/sql';
import { ClassRole } from './class-roles';
import { memberSeesTaskSql } from './task-rules.sql';
import { Tx } from '../database/transactions';

/** The caller's role in a class (null when not a member); no row when the class does not exist. */
export interface ClassRoleRow {
  role: ClassRole | null;
  is_personal: boolean;
}

/** The caller's access to a task; no row when the task never existed. */
export interface TaskAccessRow {
  task_id: string;
  class_id: string;
  is_personal: boolean;
  role: ClassRole | null;
  visible_to_members: boolean;
  deleted: boolean;
}

/**
 * The caller's access to the task of a submission or of an attachment, with the submitter (null for a task
 * attachment); no row when there is no such submission or attachment.
 */
export interface TaskItemAccessRow extends TaskAccessRow {
  submitter_id: string | null;
}

// Prepared: it runs on nearly every request keyed by a class (see Prepared).
const CLASS_ROLE = new Prepared(
  'access.class_role',
  `SELECT m.role, c.is_personal
     FROM classes c LEFT JOIN class_members m ON m.class_id = c.id AND m.user_id = $2
    WHERE c.id = $1`,
);

/**
 * The caller's (`$2`) access to the task of each row of `owner`, a query with a `task_id` column whose other
 * columns are passed through: the one join of the task access rule.
 */
const taskAccessOf = (owner: string): string =>
  `SELECT o.*, t.class_id, c.is_personal, m.role,
          ${memberSeesTaskSql('t')} AS visible_to_members,
          (t.deleted_at IS NOT NULL) AS deleted
     FROM (${owner}) o
     JOIN tasks t ON t.id = o.task_id
     JOIN classes c ON c.id = t.class_id
     LEFT JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $2`;

// Prepared: it runs on nearly every request keyed by a task.
const TASK_ACCESS = new Prepared('access.task', taskAccessOf(`SELECT $1::uuid AS task_id`));

const SUBMISSION_ACCESS = taskAccessOf(
  `SELECT s.task_id, s.user_id AS submitter_id FROM submissions s WHERE s.id = $1`,
);

// An attachment id names a row of either table (random uuid keys: at most one of them matches).
const ATTACHMENT_ACCESS = taskAccessOf(
  `SELECT ta.task_id, NULL::uuid AS submitter_id FROM task_attachments ta WHERE ta.id = $1
   UNION ALL
   SELECT s.task_id, s.user_id FROM submission_attachments sa JOIN submissions s ON s.id = sa.submission_id
    WHERE sa.id = $1`,
);

/**
 * The reads access decisions take, on the tables of classes and tasks. They live here rather than in those
 * modules' repositories so that access, which classes and tasks import, imports neither of them.
 */
@Injectable()
export class AccessRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  classRole(db: Db, classId: string, userId: string): Promise<ClassRoleRow | null> {
    return one<ClassRoleRow>(db, CLASS_ROLE, [classId, userId]);
  }

  /** Locks the class row FOR UPDATE until the transaction of `db` ends (nothing when there is none). */
  async lockClass(db: Tx, classId: string): Promise<void> {
    await rows(db, `SELECT 1 FROM classes WHERE id = $1 FOR UPDATE`, [classId]);
  }

  taskAccess(taskId: string, userId: string): Promise<TaskAccessRow | null> {
    return one(this.dataSource, TASK_ACCESS, [taskId, userId]);
  }

  submissionAccess(submissionId: string, userId: string): Promise<TaskItemAccessRow | null> {
    return one(this.dataSource, SUBMISSION_ACCESS, [submissionId, userId]);
  }

  attachmentAccess(attachmentId: string, userId: string): Promise<TaskItemAccessRow | null> {
    return one(this.dataSource, ATTACHMENT_ACCESS, [attachmentId, userId]);
  }
}

/** Only for AccessModule; other modules ask AccessService. */
@Module({ providers: [AccessRepository], exports: [AccessRepository] })
export class AccessRepositoryModule {}
