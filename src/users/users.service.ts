import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { UpdateMeDto } from './dto/update-me.dto';
import { UserDto } from './dto/user.dto';
import { User } from './entities/user.entity';
import { toUserDto } from './users.mapper';
import { UsersRepository } from './users.repository';
import { Db } from '../database/sql';
import { Transactions, Tx } from '../database/transactions';

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
 * Depends only on the DataSource and its repository, so the operator CLI can use it without the HTTP
 * application.
 */
@Injectable()
export class UsersService {
  constructor(
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
  ) {}

  /** The user with its school, or 404. */
  async findById(id: string, db: Db = this.transactions.autocommit): Promise<User> {
    const user = await this.users.findWithSchool(db, id);
    if (!user) throw AppError.notFound('User');
    return user;
  }

  async getProfile(id: string): Promise<UserDto> {
    return toUserDto(await this.findById(id));
  }

  async findCredentials(where: { email: string } | { id: string }): Promise<UserCredentials | null> {
    const row = await this.users.findCredentials(where);
    return row
      ? {
          id: row.id,
          passwordHash: row.password_hash,
          isActive: row.is_active,
          tokenVersion: row.token_version,
        }
      : null;
  }

  async emailExists(email: string, db: Db = this.transactions.autocommit): Promise<boolean> {
    return this.users.emailExists(db, email);
  }

  /**
   * Creates the user, its personal class and the OWNER membership inside the caller's transaction
   * (the class's owner foreign key is deferred to commit, so the order of the inserts is free).
   */
  async createWithPersonalClass(manager: Tx, fields: NewUser): Promise<User> {
    await this.checkSchoolFields(manager, fields.schoolId ?? null, fields.studentId ?? null);
    const userId = await this.users.insert(manager, {
      email: fields.email,
      passwordHash: fields.passwordHash,
      nickname: fields.nickname ?? null,
      timezone: fields.timezone ?? 'UTC',
      schoolId: fields.schoolId ?? null,
      studentId: fields.studentId ?? null,
    });
    await this.users.insertPersonalClass(manager, userId, PERSONAL_CLASS_NAME);
    return this.findById(userId, manager);
  }

  /** Applies `PATCH /users/me`; the school pair follows the rules of registration. */
  async updateProfile(id: string, changes: UpdateMeDto): Promise<UserDto> {
    const user = await this.transactions.run(async (manager) => {
      const current = await this.users.lockForUpdate(manager, id);
      if (!current) throw AppError.notFound('User');
      const schoolChanges = changes.schoolId !== undefined && changes.schoolId !== current.schoolId;
      const schoolId = changes.schoolId !== undefined ? changes.schoolId : current.schoolId;
      // A new school never inherits the student number of the old one.
      const studentId =
        changes.studentId !== undefined ? changes.studentId : schoolChanges ? null : current.studentId;
      await this.checkSchoolFields(manager, schoolId, studentId);
      await this.users.updateProfile(manager, id, {
        ...(changes.nickname !== undefined && { nickname: changes.nickname }),
        ...(changes.timezone !== undefined && { timezone: changes.timezone }),
        schoolId,
        studentId,
      });
      return this.findById(id, manager);
    });
    return toUserDto(user);
  }

  /**
   * Operator CLI. Deactivating also bumps the token version: the user's login tokens fail at once and stay
   * invalid after a later activation.
   */
  async setActive(email: string, isActive: boolean): Promise<UserDto> {
    const id = await this.users.setActive(email, isActive);
    if (id === null) throw AppError.notFound('User');
    return this.getProfile(id);
  }

  /** School and student number go together, and the school must exist. */
  private async checkSchoolFields(
    manager: Tx,
    schoolId: string | null,
    studentId: string | null,
  ): Promise<void> {
    if (schoolId !== null && studentId === null)
      throw AppError.validation('studentId is required with schoolId');
    if (schoolId === null && studentId !== null) throw AppError.validation('studentId requires schoolId');
    if (schoolId !== null && !(await this.users.schoolExists(manager, schoolId))) {
      throw AppError.validation('schoolId does not name a known school');
    }
  }
}
