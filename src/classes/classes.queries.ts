import { EntityManager } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { ClassRole } from './entities/class-member.entity';

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

/** One statement whatever the number of classes: memberCount is a correlated count on the primary key. */
const SUMMARY_SQL = `
  SELECT c.id, c.name, c.description, c.color, c.is_personal, c.owner_id, c.school_id, c.invite_code,
         c.created_at, m.role AS my_role,
         (SELECT count(*)::int FROM class_members cm WHERE cm.class_id = c.id) AS member_count
    FROM class_members m
    JOIN classes c ON c.id = m.class_id
   WHERE m.user_id = $1`;

/** All classes of a user: the personal class first, then by creation. */
export function listClassSummaries(db: EntityManager, userId: string): Promise<ClassSummaryRow[]> {
  return db.query(`${SUMMARY_SQL} ORDER BY c.is_personal DESC, c.created_at, c.id`, [userId]);
}

/** One class as a member sees it; 404 when the class is gone or the user no longer belongs to it. */
export async function getClassSummary(
  db: EntityManager,
  userId: string,
  classId: string,
): Promise<ClassSummaryRow> {
  const rows: ClassSummaryRow[] = await db.query(`${SUMMARY_SQL} AND c.id = $2`, [userId, classId]);
  if (rows.length === 0) throw AppError.notFound('Class');
  return rows[0];
}

/** The e-mail is read only to derive the avatar hash; responses never carry it. */
const MEMBERS_SQL = `
  SELECT m.user_id, u.nickname, u.email, m.role, m.joined_at
    FROM class_members m
    JOIN users u ON u.id = m.user_id
   WHERE m.class_id = $1`;

/** OWNER before ADMINs before MEMBERs (member list, grader's list, export); `role` is an SQL expression. */
export const roleRankSql = (role: string): string =>
  `CASE ${role} WHEN 'OWNER' THEN 0 WHEN 'ADMIN' THEN 1 ELSE 2 END`;

/** Members of a class: OWNER, then ADMINs, then MEMBERs, each by the time they joined. */
export function listClassMembers(db: EntityManager, classId: string): Promise<ClassMemberRow[]> {
  return db.query(
    `${MEMBERS_SQL}
     ORDER BY ${roleRankSql('m.role')}, m.joined_at, m.user_id`,
    [classId],
  );
}

export async function getClassMember(
  db: EntityManager,
  classId: string,
  userId: string,
): Promise<ClassMemberRow> {
  const rows: ClassMemberRow[] = await db.query(`${MEMBERS_SQL} AND m.user_id = $2`, [classId, userId]);
  if (rows.length === 0) throw AppError.notFound('Member');
  return rows[0];
}

/** The role of a user in a class, or null when not a member. */
export async function findMemberRole(
  db: EntityManager,
  classId: string,
  userId: string,
): Promise<ClassRole | null> {
  const rows: { role: ClassRole }[] = await db.query(
    `SELECT role FROM class_members WHERE class_id = $1 AND user_id = $2`,
    [classId, userId],
  );
  return rows[0]?.role ?? null;
}

export async function setMemberRole(
  db: EntityManager,
  classId: string,
  userId: string,
  role: ClassRole,
): Promise<void> {
  await db.query(`UPDATE class_members SET role = $3 WHERE class_id = $1 AND user_id = $2`, [
    classId,
    userId,
    role,
  ]);
}
