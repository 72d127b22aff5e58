import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { generateInviteCode } from '../../src/classes/invite-code';
import type { Response, Test } from 'supertest';
import { QueryRunner } from 'typeorm';
import { waitForLockWaiters } from './database';
import { TestApp } from './test-app';
import { createUser, TestUser } from './users';

export interface TestClass {
  id: string;
  name: string;
  inviteCode: string;
}

/**
 * Inserts a shared class owned by `owner` (an OWNER membership included) directly in the database.
 * For tests of features other than the Classes module, which has its own e2e tests of POST /classes.
 */
export async function createClass(
  ctx: TestApp,
  owner: { id: string },
  fields: { name?: string; description?: string | null; color?: string; schoolId?: string | null } = {},
): Promise<TestClass> {
  const name = fields.name ?? 'Test class';
  const inviteCode = generateInviteCode();
  return ctx.db.transaction(async (manager) => {
    const [row] = await manager.query(
      `INSERT INTO classes (name, description, color, owner_id, school_id, invite_code)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [
        name,
        fields.description ?? null,
        fields.color ?? '#6366f1',
        owner.id,
        fields.schoolId ?? null,
        inviteCode,
      ],
    );
    await manager.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'OWNER')`, [
      row.id,
      owner.id,
    ]);
    return { id: row.id, name, inviteCode };
  });
}

/** Adds `user` to a class as ADMIN or MEMBER (a class has one OWNER: its creator, or the target of a transfer). */
export async function addMember(
  ctx: TestApp,
  classId: string,
  user: { id: string },
  role: Exclude<ClassRole, ClassRole.OWNER> = ClassRole.MEMBER,
): Promise<void> {
  await ctx.db.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, $3)`, [
    classId,
    user.id,
    role,
  ]);
}

/** A shared class with one user in each role, plus a user who is not a member. */
export interface ClassWithMembers {
  cls: TestClass;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  outsider: TestUser;
}

type UserFields = Parameters<typeof createUser>[1];

/** `users`: fields of the user in each role (by default only a nickname naming the role). */
export async function createClassWithMembers(
  ctx: TestApp,
  fields: Parameters<typeof createClass>[2] = {},
  users: Record<'owner' | 'admin' | 'member' | 'outsider', UserFields> = {
    owner: { nickname: 'Owner' },
    admin: { nickname: 'Admin' },
    member: { nickname: 'Member' },
    outsider: { nickname: 'Outsider' },
  },
): Promise<ClassWithMembers> {
  const [owner, admin, member, outsider] = await Promise.all(
    [users.owner, users.admin, users.member, users.outsider].map((userFields) => createUser(ctx, userFields)),
  );
  const cls = await createClass(ctx, owner, fields);
  await addMember(ctx, cls.id, admin, ClassRole.ADMIN);
  await addMember(ctx, cls.id, member, ClassRole.MEMBER);
  return { cls, owner, admin, member, outsider };
}

/**
 * Sends `request` while a change of the class holds its row locked (as membership changes, PATCH, invite-code
 * rotation and deletion do), and commits `change` once the request waits: the request must then decide on
 * the class and roles as the change left them.
 */
export async function duringClassChange(
  ctx: TestApp,
  classId: string,
  change: (db: QueryRunner) => Promise<unknown>,
  request: () => Test,
): Promise<Response> {
  const runner = ctx.db.createQueryRunner();
  await runner.startTransaction();
  try {
    await runner.query(`SELECT 1 FROM classes WHERE id = $1 FOR UPDATE`, [classId]);
    const pending = request().then((res) => res);
    await waitForLockWaiters(ctx.db, 1);
    await change(runner);
    await runner.commitTransaction();
    return await pending;
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    await runner.release();
  }
}
