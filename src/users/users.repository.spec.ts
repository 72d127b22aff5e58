import { DataSource } from 'typeorm';
import { useTestDataSource } from '../../test/utils/test-data-source';
import { AppError } from '../common/errors/app-error';
import { UsersRepository } from './users.repository';

describe('UsersRepository (real PostgreSQL)', () => {
  let db: DataSource;
  let users: UsersRepository;

  useTestDataSource((created) => {
    db = created;
    users = new UsersRepository(db);
  });

  const fields = (email: string) => ({
    email,
    passwordHash: 'hash-1',
    nickname: null,
    timezone: 'UTC',
    schoolId: null,
    studentId: null,
  });

  const register = (email: string): Promise<string> =>
    db.transaction(async (manager) => {
      const id = await users.insert(manager, fields(email));
      await users.insertPersonalClass(manager, id, 'Personal');
      return id;
    });

  it('creates a user with a personal class, and answers a taken address with 409', async () => {
    const id = await register('ada@example.test');
    const user = await users.findWithSchool(db, id);
    expect(user).toMatchObject({ id, email: 'ada@example.test', school: null });
    const [{ n }] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM classes WHERE owner_id = $1 AND is_personal`,
      [id],
    );
    expect(n).toBe(1);
    const again = register('ada@example.test');
    await expect(again).rejects.toBeInstanceOf(AppError);
    await expect(again).rejects.toMatchObject({
      status: 409,
      message: 'This e-mail address is already registered',
    });
  });

  it('replaces a password only while the replaced hash is current, and deactivation revokes tokens', async () => {
    const id = await register('grace@example.test');
    const kept = { hash: 'a'.repeat(64), version: 0 };
    expect(await users.replacePassword(db, id, 'hash-2', 'not-the-hash', kept)).toBe(false);
    expect(await users.replacePassword(db, id, 'hash-2', 'hash-1', kept)).toBe(true);
    expect(await users.findCredentials({ id })).toMatchObject({ password_hash: 'hash-2', token_version: 1 });
    expect(await users.tokenUser(id)).toMatchObject({
      id,
      email: 'grace@example.test',
      token_version: 1,
      kept_token_hash: kept.hash,
      kept_token_version: 0,
    });
    expect(await users.setActive('grace@example.test', false)).toBe(id);
    expect(await users.tokenUser(id)).toBeNull();
    expect(await users.findCredentials({ email: 'grace@example.test' })).toMatchObject({ token_version: 2 });
    await users.setActive('grace@example.test', true);
    expect(await users.tokenUser(id)).toMatchObject({ kept_token_hash: null, kept_token_version: null });
    expect(await users.setActive('nobody@example.test', true)).toBeNull();
  });
});
