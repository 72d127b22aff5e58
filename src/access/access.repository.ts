import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db, one, Prepared, rows } from '../database/sql';
import { ClassRole } from './class-roles';
import { memberSeesTaskSql } from './task-rules.sql';

/** The caller's role in a class (null when not a member); no row when the class does not exist. */
export interface ClassRoleRow {
  role: ClassRole | null;
  is_personal: boolean;
}

/** The caller's access to a task; no row when the task never existed. */
export interface TaskAccessRow {
  class_id: string;
  is_personal: boolean;
  role: ClassRole | null;
  visible_to_members: boolean;
  deleted: boolean;
}

// Prepared: it runs on nearly every request keyed by a class (see Prepared).
const CLASS_ROLE = new Prepared(
  'access.class_role',
  `SELECT m.role, c.is_personal
     FROM classes c LEFT JOIN class_members m ON m.class_id = c.id AND m.user_id = $2
    WHERE c.id = $1`,
);

// Prepared: it runs on nearly every request keyed by a task.
const TASK_ACCESS = new Prepared(
  'access.task',
  `SELECT t.class_id, c.is_personal, m.role,
          ${memberSeesTaskSql('t')} AS visible_to_members,
          (t.deleted_at IS NOT NULL) AS deleted
     FROM tasks t
     JOIN classes c ON c.id = t.class_id
     LEFT JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $2
    WHERE t.id = $1`,
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
  async lockClass(db: Db, classId: string): Promise<void> {
    await rows(db, `SELECT 1 FROM classes WHERE id = $1 FOR UPDATE`, [classId]);
  }

  taskAccess(taskId: string, userId: string): Promise<TaskAccessRow | null> {
    return one(this.dataSource, TASK_ACCESS, [taskId, userId]);
  }
}

/** Only for AccessModule; other modules ask AccessService. */
@Module({ providers: [AccessRepository], exports: [AccessRepository] })
export class AccessRepositoryModule {}
