import { randomBytes, randomUUID } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import { hashSync } from 'bcrypt';
import { TestApp } from './test-app';

export interface TestUser {
  id: string;
  email: string;
  token: string;
  personalClassId: string;
  /** `Authorization` header value. */
  auth: string;
}

export const TEST_PASSWORD = 'correct horse battery';
const TEST_PASSWORD_HASH = hashSync(TEST_PASSWORD, 4);

/**
 * Inserts an active user with a personal class directly in the database and signs a login token for it.
 * For tests of features other than registration, which has its own e2e tests.
 */
export async function createUser(
  ctx: TestApp,
  fields: {
    email?: string;
    nickname?: string | null;
    timezone?: string;
    schoolId?: string;
    studentId?: string;
  } = {},
): Promise<TestUser> {
  const email = fields.email ?? `user-${randomBytes(5).toString('hex')}@example.com`;
  return ctx.db.transaction(async (manager) => {
    const [user] = await manager.query(
      `INSERT INTO users (email, password_hash, nickname, timezone, school_id, student_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [
        email,
        TEST_PASSWORD_HASH,
        fields.nickname ?? null,
        fields.timezone ?? 'UTC',
        fields.schoolId ?? null,
        fields.studentId ?? null,
      ],
    );
    const [personal] = await manager.query(
      `INSERT INTO classes (name, is_personal, owner_id) VALUES ('Personal', true, $1) RETURNING id`,
      [user.id],
    );
    await manager.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, 'OWNER')`, [
      personal.id,
      user.id,
    ]);
    const token = await ctx.app.get(JwtService).signAsync({ sub: user.id, ver: 0 });
    return { id: user.id, email, token, personalClassId: personal.id, auth: `Bearer ${token}` };
  });
}

/** Inserts a school (schools have no API to create them). */
export async function createSchool(
  ctx: TestApp,
  name = `School ${randomUUID()}`,
): Promise<{ id: string; name: string }> {
  const [row] = await ctx.db.query(`INSERT INTO schools (name) VALUES ($1) RETURNING id`, [name]);
  return { id: row.id, name };
}

/** Logs `user` in again (POST /auth/login with TEST_PASSWORD): the same user with the token of a new session. */
export async function newSession(ctx: TestApp, user: TestUser): Promise<TestUser> {
  const res = await ctx.http.post('/auth/login').send({ email: user.email, password: TEST_PASSWORD });
  if (res.status !== 200) throw new Error(`login answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { ...user, token: res.body.token, auth: `Bearer ${res.body.token}` };
}
