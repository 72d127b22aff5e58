import { Injectable } from '@nestjs/common';
import { AccessService, ClassAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { FileStorage } from '../files/file-storage';
import { ClassChanges, ClassesRepository, ClassSummaryRow } from './classes.repository';
import { CreateClassDto, UpdateClassDto } from './dto/class-fields.dto';
import { DEFAULT_CLASS_COLOR } from './entities/class.entity';
import { ClassRole, MANAGER_ROLES } from './entities/class-member.entity';
import { normalizeInviteCode, withFreshInviteCode } from './invite-code';
import { assertIfMatch, IfMatchTags } from '../common/http/entity-tags';
import { toClassSummary } from './classes.mapper';
import { Transactions } from '../database/transactions';

const ALREADY_A_MEMBER = (): AppError => AppError.conflict('You are already a member of this class');

@Injectable()
export class ClassesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
    private readonly classes: ClassesRepository,
  ) {}

  list(userId: string): Promise<ClassSummaryRow[]> {
    return this.classes.listSummaries(userId);
  }

  get(userId: string, classId: string): Promise<ClassSummaryRow> {
    return this.classes.getSummary(this.transactions.autocommit, userId, classId);
  }

  /** A shared class with the caller as OWNER; class and membership commit together (deferred owner FK). */
  create(userId: string, dto: CreateClassDto): Promise<ClassSummaryRow> {
    return this.transactions.run(async (manager) => {
      // The school row stays locked against deletion until the class is committed.
      if (dto.schoolId && !(await this.classes.lockSchool(manager, dto.schoolId))) {
        throw AppError.validation('schoolId does not name a known school');
      }
      const fields = {
        name: dto.name,
        description: dto.description ?? null,
        color: dto.color ?? DEFAULT_CLASS_COLOR,
        ownerId: userId,
        schoolId: dto.schoolId ?? null,
      };
      const classId = await withFreshInviteCode((code) => this.classes.insert(manager, fields, code));
      await this.classes.addMember(manager, classId, userId, ClassRole.OWNER);
      return this.classes.getSummary(manager, userId, classId);
    });
  }

  /** Under the class lock, so a concurrent demotion or removal of the caller is seen (then 403, no change). */
  /** `ifMatch`: checked against the class as the caller's GET shows it, under the class row's lock. */
  update(
    userId: string,
    classId: string,
    dto: UpdateClassDto,
    ifMatch?: IfMatchTags,
  ): Promise<ClassSummaryRow> {
    return this.transactions.run(async (manager) => {
      await this.access.lockClassRole(manager, classId, userId, MANAGER_ROLES);
      if (ifMatch)
        assertIfMatch(ifMatch, toClassSummary(await this.classes.getSummary(manager, userId, classId)));
      const changes: ClassChanges = {};
      if (dto.name !== undefined) changes.name = dto.name;
      if (dto.description !== undefined) changes.description = dto.description;
      if (dto.color !== undefined) changes.color = dto.color;
      await this.classes.update(manager, classId, changes);
      return this.classes.getSummary(manager, userId, classId);
    });
  }

  /**
   * Deletes the class with its tasks, submissions and attachment rows (ON DELETE CASCADE), then the stored
   * files. The tasks and submissions are locked first so no attachment can be added while the keys are
   * collected; the files go only after the commit, so a rolled-back delete never loses a file.
   */
  async remove(userId: string, classId: string): Promise<void> {
    const fileKeys = await this.transactions.run(async (manager) => {
      const access = await this.access.lockClassRole(manager, classId, userId, [ClassRole.OWNER]);
      if (access.isPersonal) throw AppError.forbidden('The personal class cannot be deleted');
      const keys = await this.classes.lockContentFileKeys(manager, classId);
      await this.classes.delete(manager, classId);
      return keys;
    });
    // The class is already gone: a storage failure leaves orphaned files only (logged).
    await this.storage.discard(fileKeys, { classId });
  }

  /**
   * Joins as MEMBER. The class row is key-share locked so it cannot vanish between lookup and insert. A member
   * is told so (409) before the school is compared: for them the restriction decides nothing.
   */
  join(userId: string, inviteCode: string): Promise<ClassSummaryRow> {
    return this.transactions.run(async (manager) => {
      const target = await this.classes.joinTarget(manager, normalizeInviteCode(inviteCode), userId);
      if (!target) throw AppError.notFound('Invite code');
      if (target.is_member) throw ALREADY_A_MEMBER();
      if (target.school_id !== null && target.school_id !== target.user_school_id) {
        throw AppError.forbidden('This class is restricted to another school');
      }
      // A concurrent join of the same user is waited for and then reported as the duplicate.
      if (!(await this.classes.addMemberIfAbsent(manager, target.id, userId, ClassRole.MEMBER))) {
        throw ALREADY_A_MEMBER();
      }
      return this.classes.getSummary(manager, userId, target.id);
    });
  }

  /**
   * A new invite code; the old one stops matching at commit. Under the class lock, so a caller demoted or
   * removed meanwhile gets 403, not a code. A code taken by another class is retried under a savepoint.
   */
  rotateInviteCode(access: ClassAccess, userId: string): Promise<string> {
    if (access.isPersonal) throw AppError.forbidden('A personal class has no invite code');
    return this.transactions.run(async (manager) => {
      await this.access.lockClassRole(manager, access.classId, userId, MANAGER_ROLES);
      return withFreshInviteCode(async (code) =>
        (await this.classes.trySetInviteCode(manager, access.classId, code)) ? code : undefined,
      );
    });
  }
}
