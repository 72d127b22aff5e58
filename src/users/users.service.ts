import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ClassMember, ClassRole } from '../classes/entities/class-member.entity';
import { ClassEntity } from '../classes/entities/class.entity';
import { AppError } from '../common/errors/app-error';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { School } from '../schools/entities/school.entity';
import { UpdateMeDto } from './dto/update-me.dto';
import { UserDto } from './dto/user.dto';
import { User } from './entities/user.entity';
import { toUserDto } from './users.mapper';

export const PERSONAL_CLASS_NAME = 'Personal';

export interface NewUser {
  email: string;
  passwordHash: string;
  nickname?: string | null;
  timezone?: string;
  schoolId?: string | null;
  studentId?: string | null;
}

/** A user row with its password hash, for checking credentials. */
export interface UserCredentials {
  id: string;
  passwordHash: string;
  isActive: boolean;
  /** Bumped by every password change and deactivation: tells whether the row changed since it was read. */
  tokenVersion: number;
}

/**
 * Profiles, and the rules every write of a profile obeys (school and student number, unique e-mail).
 * Depends only on the DataSource so the operator CLI can use it without the HTTP application.
 */
@Injectable()
export class UsersService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The user with its school, or 404. */
  async findById(id: string, manager: EntityManager = this.dataSource.manager): Promise<User> {
    const user = await manager.getRepository(User).findOne({ where: { id }, relations: { school: true } });
    if (!user) throw AppError.notFound('User');
    return user;
  }

  async getProfile(id: string): Promise<UserDto> {
    return toUserDto(await this.findById(id));
  }

  async findCredentials(where: { email: string } | { id: string }): Promise<UserCredentials | null> {
    const [column, value] = 'email' in where ? ['email', where.email] : ['id', where.id];
    const rows: { id: string; password_hash: string; is_active: boolean; token_version: number }[] =
      await this.dataSource.query(
        `SELECT id, password_hash, is_active, token_version FROM users WHERE ${column} = $1`,
        [value],
      );
    const row = rows[0];
    return row
      ? {
          id: row.id,
          passwordHash: row.password_hash,
          isActive: row.is_active,
          tokenVersion: row.token_version,
        }
      : null;
  }

  async emailExists(email: string, manager: EntityManager = this.dataSource.manager): Promise<boolean> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM users WHERE email = $1`, [email]);
    return rows.length > 0;
  }

  /**
   * Creates the user, its personal class and the OWNER membership inside the caller's transaction
   * (the class's owner foreign key is deferred to commit, so the order of the inserts is free).
   */
  async createWithPersonalClass(manager: EntityManager, fields: NewUser): Promise<User> {
    await this.checkSchoolFields(manager, fields.schoolId ?? null, fields.studentId ?? null);
    const userId = await this.mapConflicts(async () => {
      const inserted = await manager.getRepository(User).insert({
        email: fields.email,
        passwordHash: fields.passwordHash,
        nickname: fields.nickname ?? null,
        timezone: fields.timezone ?? 'UTC',
        schoolId: fields.schoolId ?? null,
        studentId: fields.studentId ?? null,
      });
      return (inserted.identifiers[0] as { id: string }).id;
    });
    const personal = await manager
      .getRepository(ClassEntity)
      .insert({ name: PERSONAL_CLASS_NAME, isPersonal: true, ownerId: userId });
    await manager.getRepository(ClassMember).insert({
      classId: (personal.identifiers[0] as { id: string }).id,
      userId,
      role: ClassRole.OWNER,
    });
    return this.findById(userId, manager);
  }

  /** Applies `PATCH /users/me`; the school pair follows the rules of registration. */
  async updateProfile(id: string, changes: UpdateMeDto): Promise<UserDto> {
    const user = await this.dataSource.transaction(async (manager) => {
      const current = await manager
        .getRepository(User)
        .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
      if (!current) throw AppError.notFound('User');
      const schoolChanges = changes.schoolId !== undefined && changes.schoolId !== current.schoolId;
      const schoolId = changes.schoolId !== undefined ? changes.schoolId : current.schoolId;
      // A new school never inherits the student number of the old one.
      const studentId =
        changes.studentId !== undefined ? changes.studentId : schoolChanges ? null : current.studentId;
      await this.checkSchoolFields(manager, schoolId, studentId);
      await this.mapConflicts(() =>
        manager.getRepository(User).update(id, {
          ...(changes.nickname !== undefined && { nickname: changes.nickname }),
          ...(changes.timezone !== undefined && { timezone: changes.timezone }),
          schoolId,
          studentId,
        }),
      );
      return this.findById(id, manager);
    });
    return toUserDto(user);
  }

  /**
   * Operator CLI. Deactivating also bumps the token version: the user's login tokens fail at once and stay
   * invalid after a later activation.
   */
  async setActive(email: string, isActive: boolean): Promise<UserDto> {
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      `UPDATE users SET is_active = $2, token_version = token_version + (CASE WHEN $2 THEN 0 ELSE 1 END),
         updated_at = now()
       WHERE email = $1 RETURNING id`,
      [email, isActive],
    );
    if (!rows[0]) throw AppError.notFound('User');
    return this.getProfile(rows[0].id);
  }

  /** Runs a write and turns the unique violations of `users` into 409 answers. */
  mapConflicts<T>(write: () => Promise<T>): Promise<T> {
    return withConstraintErrors(write);
  }

  /** School and student number go together, and the school must exist. */
  private async checkSchoolFields(
    manager: EntityManager,
    schoolId: string | null,
    studentId: string | null,
  ): Promise<void> {
    if (schoolId !== null && studentId === null)
      throw AppError.validation('studentId is required with schoolId');
    if (schoolId === null && studentId !== null) throw AppError.validation('studentId requires schoolId');
    if (schoolId !== null && !(await manager.getRepository(School).existsBy({ id: schoolId }))) {
      throw AppError.validation('schoolId does not name a known school');
    }
  }
}
