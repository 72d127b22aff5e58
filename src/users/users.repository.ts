import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ClassMember, ClassRole } from '../classes/entities/class-member.entity';
import { ClassEntity } from '../classes/entities/class.entity';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { Db, entityManager, one, Prepared, rows } from '../database/sql';
import { User } from './entities/user.entity';
import { Tx } from '../database/transactions';

export interface CredentialsRow {
  id: string;
  password_hash: string;
  is_active: boolean;
  token_version: number;
}

export type TokenUserRow = AuthUser & {
  token_version: number;
  kept_token_hash: string | null;
  kept_token_version: number | null;
};

/** The login token a password change keeps valid (see User.keptTokenHash). */
export interface KeptToken {
  hash: string;
  version: number;
}

export interface NewUserRow {
  email: string;
  passwordHash: string;
  nickname: string | null;
  timezone: string;
  schoolId: string | null;
  studentId: string | null;
}

export type ProfileChanges = Partial<Pick<User, 'nickname' | 'timezone' | 'schoolId' | 'studentId'>>;

/** An authenticated request whose user is not cached runs this primary-key probe. */
const TOKEN_USER = new Prepared(
  'auth.token_user',
  `SELECT id, email, timezone, token_version, kept_token_hash, kept_token_version
     FROM users WHERE id = $1 AND is_active`,
);

/**
 * Users with their personal class. Unique violations of `users` come out as the constraint table's answers
 * (409).
 */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The user with its school. */
  findWithSchool(db: Db, id: string): Promise<User | null> {
    return entityManager(db)
      .getRepository(User)
      .findOne({ where: { id }, relations: { school: true } });
  }

  /** The user row locked FOR UPDATE until the transaction of `db` ends. */
  lockForUpdate(db: Tx, id: string): Promise<User | null> {
    return entityManager(db)
      .getRepository(User)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  findCredentials(where: { email: string } | { id: string }): Promise<CredentialsRow | null> {
    const column = 'email' in where ? 'email' : 'id';
    return one<CredentialsRow>(
      this.dataSource,
      `SELECT id, password_hash, is_active, token_version FROM users WHERE ${column} = $1`,
      ['email' in where ? where.email : where.id],
    );
  }

  /** The active user of the login token's subject (prepared: it runs on many requests). */
  tokenUser(userId: string): Promise<TokenUserRow | null> {
    return one<TokenUserRow>(this.dataSource, TOKEN_USER, [userId]);
  }

  async emailExists(db: Db, email: string): Promise<boolean> {
    return (await one(db, `SELECT 1 FROM users WHERE email = $1`, [email])) !== null;
  }

  /** The id of the active account with this address, or null. */
  async activeIdByEmail(db: Db, email: string): Promise<string | null> {
    const row = await one<{ id: string }>(db, `SELECT id FROM users WHERE email = $1 AND is_active`, [email]);
    return row?.id ?? null;
  }

  async schoolExists(db: Db, schoolId: string): Promise<boolean> {
    return (await one(db, `SELECT 1 FROM schools WHERE id = $1`, [schoolId])) !== null;
  }

  /** The new user's id. */
  async insert(db: Db, fields: NewUserRow): Promise<string> {
    const inserted = await withConstraintErrors(() => entityManager(db).getRepository(User).insert(fields));
    return (inserted.identifiers[0] as { id: string }).id;
  }

  /** The user's personal class with the user as OWNER (the owner foreign key is checked at commit). */
  async insertPersonalClass(db: Db, userId: string, name: string): Promise<void> {
    const manager = entityManager(db);
    const personal = await manager
      .getRepository(ClassEntity)
      .insert({ name, isPersonal: true, ownerId: userId });
    await manager.getRepository(ClassMember).insert({
      classId: (personal.identifiers[0] as { id: string }).id,
      userId,
      role: ClassRole.OWNER,
    });
  }

  async updateProfile(db: Db, id: string, changes: ProfileChanges): Promise<void> {
    await withConstraintErrors(() => entityManager(db).getRepository(User).update(id, changes));
  }

  async setEmail(db: Db, userId: string, email: string): Promise<void> {
    await withConstraintErrors(() =>
      rows(db, `UPDATE users SET email = $2, updated_at = now()::timestamptz(3) WHERE id = $1`, [
        userId,
        email,
      ]),
    );
  }

  /**
   * New password hash and token version: every login token stops working but `keptToken` (null: none); with
   * `replacedHash` only while that is still the stored hash. False when nothing changed.
   */
  async replacePassword(
    db: Db,
    userId: string,
    passwordHash: string,
    replacedHash: string | null,
    keptToken: KeptToken | null,
  ): Promise<boolean> {
    const changed = await rows(
      db,
      `UPDATE users SET password_hash = $2, token_version = token_version + 1,
         kept_token_hash = $4, kept_token_version = $5, updated_at = now()::timestamptz(3)
       WHERE id = $1 AND ($3::varchar IS NULL OR password_hash = $3) RETURNING id`,
      [userId, passwordHash, replacedHash, keptToken?.hash ?? null, keptToken?.version ?? null],
    );
    return changed.length > 0;
  }

  /**
   * Deactivating also bumps the token version and forgets the token a password change kept, so no token of
   * the user works after a reactivation. The user's id, or null when no user has the address.
   */
  async setActive(email: string, isActive: boolean): Promise<string | null> {
    const row = await one<{ id: string }>(
      this.dataSource,
      `UPDATE users SET is_active = $2, token_version = token_version + (CASE WHEN $2 THEN 0 ELSE 1 END),
         kept_token_hash = CASE WHEN $2 THEN kept_token_hash END,
         kept_token_version = CASE WHEN $2 THEN kept_token_version END,
         updated_at = now()::timestamptz(3)
       WHERE email = $1 RETURNING id`,
      [email, isActive],
    );
    return row?.id ?? null;
  }
}

/** Imported by the modules that use this repository (see ClassesRepositoryModule). */
@Module({ providers: [UsersRepository], exports: [UsersRepository] })
export class UsersRepositoryModule {}
