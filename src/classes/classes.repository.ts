import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { isUniqueViolation } from '../common/utils/pg-errors';
import { affected, Db, entityManager, one, rows } from '../database/sql';
import { ClassRole } from './entities/class-member.entity';
import { ClassEntity } from './entities/class.entity';
import { Tx } from '../database/transactions';

/** A class as the caller sees it: the caller's role and the member count come from the same statement. */
export interface ClassSummaryRow {
  id: string;
  name: string;
  description: string | null;
  color: string;
  is_personal: boolean;
  owner_id: string;
  school_id: string | null;
  invite_code: string | null;
  my_role: ClassRole;
  member_count: number;
  created_at: Date;
}

export interface ClassMemberRow {
  user_id: string;
  nickname: string | null;
  email: string;
  role: ClassRole;
  joined_at: Date;
}

/** The caller's role in a class (null: not a member); no row when the class does not exist. */
/** The class an invite code names, as the joining user meets it. */
export interface JoinTargetRow {
  id: string;
  school_id: string | null;
  user_school_id: string | null;
  is_member: boolean;
}

export interface NewClass {
  name: string;
  description: string | null;
  color: string;
  ownerId: string;
  schoolId: string | null;
}

export type ClassChanges = Partial<Pick<ClassEntity, 'name' | 'description' | 'color'>>;

/** One statement whatever the number of classes: memberCount is a correlated count on the primary key. */
const SUMMARY_SQL = `
  SELECT c.id, c.name, c.description, c.color, c.is_personal, c.owner_id, c.school_id, c.invite_code,
         c.created_at, m.role AS my_role,
         (SELECT count(*)::int FROM class_members cm WHERE cm.class_id = c.id) AS member_count
    FROM class_members m
    JOIN classes c ON c.id = m.class_id
   WHERE m.user_id = $1`;

/** The e-mail is read only to derive the avatar hash; responses never carry it. */
const MEMBERS_SQL = `
  SELECT m.user_id, u.nickname, u.email, m.role, m.joined_at
    FROM class_members m
    JOIN users u ON u.id = m.user_id
   WHERE m.class_id = $1`;

/** OWNER before ADMINs before MEMBERs (member list, grader's list, export); `role` is an SQL expression. */
export const roleRankSql = (role: string): string =>
  `CASE ${role} WHEN 'OWNER' THEN 0 WHEN 'ADMIN' THEN 1 ELSE 2 END`;

/** Classes and their memberships: every statement on `classes` and `class_members`. */
@Injectable()
export class ClassesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** All classes of a user: the personal class first, then by creation. */
  listSummaries(userId: string): Promise<ClassSummaryRow[]> {
    return rows(this.dataSource, `${SUMMARY_SQL} ORDER BY c.is_personal DESC, c.created_at, c.id`, [userId]);
  }

  /** One class as a member sees it; 404 when the class is gone or the user no longer belongs to it. */
  async getSummary(db: Db, userId: string, classId: string): Promise<ClassSummaryRow> {
    const row = await one<ClassSummaryRow>(db, `${SUMMARY_SQL} AND c.id = $2`, [userId, classId]);
    if (!row) throw AppError.notFound('Class');
    return row;
  }

  /** Members of a class: OWNER, then ADMINs, then MEMBERs, each by the time they joined. */
  listMembers(classId: string): Promise<ClassMemberRow[]> {
    return rows(
      this.dataSource,
      `${MEMBERS_SQL}
     ORDER BY ${roleRankSql('m.role')}, m.joined_at, m.user_id`,
      [classId],
    );
  }

  async getMember(db: Db, classId: string, userId: string): Promise<ClassMemberRow> {
    const row = await one<ClassMemberRow>(db, `${MEMBERS_SQL} AND m.user_id = $2`, [classId, userId]);
    if (!row) throw AppError.notFound('Member');
    return row;
  }

  /** The role of a user in a class, or null when not a member. */
  async findMemberRole(db: Db, classId: string, userId: string): Promise<ClassRole | null> {
    const row = await one<{ role: ClassRole }>(
      db,
      `SELECT role FROM class_members WHERE class_id = $1 AND user_id = $2`,
      [classId, userId],
    );
    return row?.role ?? null;
  }

  /** The caller's role; no row when the class does not exist. Prepared on the pool, plain in a transaction. */
  /** Key-share locks the class row against deletion; false when there is no such class. */
  async lockKeyShare(db: Tx, classId: string): Promise<boolean> {
    return (await one(db, `SELECT 1 FROM classes WHERE id = $1 FOR KEY SHARE`, [classId])) !== null;
  }

  /** Key-share locks a school row against deletion; false when there is no such school. */
  async lockSchool(db: Tx, schoolId: string): Promise<boolean> {
    return (await one(db, `SELECT 1 FROM schools WHERE id = $1 FOR KEY SHARE`, [schoolId])) !== null;
  }

  /** The new class's id; undefined when the invite code is taken (the caller draws another). */
  async insert(db: Db, fields: NewClass, inviteCode: string): Promise<string | undefined> {
    const row = await one<{ id: string }>(
      db,
      `INSERT INTO classes (name, description, color, owner_id, school_id, invite_code)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (invite_code) DO NOTHING
           RETURNING id`,
      [fields.name, fields.description, fields.color, fields.ownerId, fields.schoolId, inviteCode],
    );
    return row?.id;
  }

  async addMember(db: Db, classId: string, userId: string, role: ClassRole): Promise<void> {
    await rows(db, `INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, $3)`, [
      classId,
      userId,
      role,
    ]);
  }

  /**
   * Adds the member unless already one; false then. ON CONFLICT waits for a concurrent insert of the same
   * user to finish and then reports the duplicate.
   */
  async addMemberIfAbsent(db: Db, classId: string, userId: string, role: ClassRole): Promise<boolean> {
    const inserted = await rows(
      db,
      `INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (class_id, user_id) DO NOTHING
         RETURNING user_id`,
      [classId, userId, role],
    );
    return inserted.length > 0;
  }

  async update(db: Db, classId: string, changes: ClassChanges): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    await entityManager(db).getRepository(ClassEntity).update(classId, changes);
  }

  /** The class row key-share locked by the invite code, so it cannot vanish before the join is written. */
  joinTarget(db: Tx, inviteCode: string, userId: string): Promise<JoinTargetRow | null> {
    return one<JoinTargetRow>(
      db,
      `SELECT c.id, c.school_id, u.school_id AS user_school_id,
                EXISTS (SELECT 1 FROM class_members m WHERE m.class_id = c.id AND m.user_id = u.id) AS is_member
           FROM classes c JOIN users u ON u.id = $2
          WHERE c.invite_code = $1
            FOR KEY SHARE OF c`,
      [inviteCode, userId],
    );
  }

  async setMemberRole(db: Db, classId: string, userId: string, role: ClassRole): Promise<void> {
    await rows(db, `UPDATE class_members SET role = $3 WHERE class_id = $1 AND user_id = $2`, [
      classId,
      userId,
      role,
    ]);
  }

  async removeMember(db: Db, classId: string, userId: string): Promise<void> {
    await rows(db, `DELETE FROM class_members WHERE class_id = $1 AND user_id = $2`, [classId, userId]);
  }

  async setOwner(db: Db, classId: string, ownerId: string): Promise<void> {
    await rows(db, `UPDATE classes SET owner_id = $2, updated_at = now()::timestamptz(3) WHERE id = $1`, [
      classId,
      ownerId,
    ]);
  }

  /**
   * Sets the invite code under a savepoint; false (and the savepoint rolled back, the transaction usable) when
   * another class has it.
   */
  async trySetInviteCode(db: Tx, classId: string, code: string): Promise<boolean> {
    await rows(db, 'SAVEPOINT new_invite_code');
    try {
      await rows(
        db,
        `UPDATE classes SET invite_code = $2, updated_at = now()::timestamptz(3) WHERE id = $1`,
        [classId, code],
      );
      return true;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await rows(db, 'ROLLBACK TO SAVEPOINT new_invite_code');
      return false;
    }
  }

  /**
   * Locks the class's tasks and submissions (so no attachment is added meanwhile) and answers the file keys
   * of all their attachments, those of older submission versions included.
   */
  async lockContentFileKeys(db: Tx, classId: string): Promise<string[]> {
    await rows(db, `SELECT count(*) FROM (SELECT 1 FROM tasks WHERE class_id = $1 FOR UPDATE) locked`, [
      classId,
    ]);
    await rows(
      db,
      `SELECT count(*) FROM (
           SELECT 1 FROM submissions s JOIN tasks t ON t.id = s.task_id WHERE t.class_id = $1 FOR UPDATE OF s
         ) locked`,
      [classId],
    );
    const keys = await rows<{ file_key: string }>(
      db,
      `SELECT ta.file_key FROM task_attachments ta JOIN tasks t ON t.id = ta.task_id WHERE t.class_id = $1
         UNION ALL
         SELECT sa.file_key FROM submission_attachments sa
           JOIN submissions s ON s.id = sa.submission_id
           JOIN tasks t ON t.id = s.task_id
          WHERE t.class_id = $1
         UNION ALL
         SELECT h.file_key FROM submission_attachment_history h
           JOIN submissions s ON s.id = h.submission_id
           JOIN tasks t ON t.id = s.task_id
          WHERE t.class_id = $1`,
      [classId],
    );
    return keys.map((row) => row.file_key);
  }

  /** Deletes the class; its tasks, submissions and attachment rows go with it (ON DELETE CASCADE). */
  async delete(db: Db, classId: string): Promise<number> {
    return affected(db, `DELETE FROM classes WHERE id = $1`, [classId]);
  }
}

/**
 * A repository another module uses comes with a module of its own beside it, which each user imports
 * (here: classes and tasks); one only its own module uses is a provider of that module.
 */
@Module({ providers: [ClassesRepository], exports: [ClassesRepository] })
export class ClassesRepositoryModule {}
