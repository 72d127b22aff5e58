import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AccessService, ClassAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { isUniqueViolation } from '../common/utils/pg-errors';
import { FileStorage } from '../files/file-storage';
import { ClassSummaryRow, getClassSummary, listClassSummaries } from './classes.queries';
import { CreateClassDto, UpdateClassDto } from './dto/class-fields.dto';
import { ClassEntity, DEFAULT_CLASS_COLOR } from './entities/class.entity';
import { ClassRole, MANAGER_ROLES } from './entities/class-member.entity';
import { normalizeInviteCode, withFreshInviteCode } from './invite-code';

/** The class an invite code names, as the joining user meets it. */
interface JoinTargetRow {
  id: string;
  school_id: string | null;
  user_school_id: string | null;
  is_member: boolean;
}

const ALREADY_A_MEMBER = (): AppError => AppError.conflict('You are already a member of this class');

@Injectable()
export class ClassesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
  ) {}

  list(userId: string): Promise<ClassSummaryRow[]> {
    return listClassSummaries(this.dataSource.manager, userId);
  }

  get(userId: string, classId: string): Promise<ClassSummaryRow> {
    return getClassSummary(this.dataSource.manager, userId, classId);
  }

  /** A shared class with the caller as OWNER; class and membership commit together (deferred owner FK). */
  create(userId: string, dto: CreateClassDto): Promise<ClassSummaryRow> {
    return this.dataSource.transaction(async (manager) => {
      if (dto.schoolId) await this.lockSchool(manager, dto.schoolId);
      const classId = await withFreshInviteCode(async (code) => {
        const rows: { id: string }[] = await manager.query(
          `INSERT INTO classes (name, description, color, owner_id, school_id, invite_code)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (invite_code) DO NOTHING
           RETURNING id`,
          [
            dto.name,
            dto.description ?? null,
            dto.color ?? DEFAULT_CLASS_COLOR,
            userId,
            dto.schoolId ?? null,
            code,
          ],
        );
        return rows[0]?.id;
      });
      await manager.query(`INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, $3)`, [
        classId,
        userId,
        ClassRole.OWNER,
      ]);
      return getClassSummary(manager, userId, classId);
    });
  }

  /** Under the class lock, so a concurrent demotion or removal of the caller is seen (then 403, no change). */
  update(userId: string, classId: string, dto: UpdateClassDto): Promise<ClassSummaryRow> {
    return this.dataSource.transaction(async (manager) => {
      await this.access.lockClassRole(manager, classId, userId, MANAGER_ROLES);
      const changes: Partial<Pick<ClassEntity, 'name' | 'description' | 'color'>> = {};
      if (dto.name !== undefined) changes.name = dto.name;
      if (dto.description !== undefined) changes.description = dto.description;
      if (dto.color !== undefined) changes.color = dto.color;
      if (Object.keys(changes).length > 0) await manager.getRepository(ClassEntity).update(classId, changes);
      return getClassSummary(manager, userId, classId);
    });
  }

  /**
   * Deletes the class with its tasks, submissions and attachment rows (ON DELETE CASCADE), then the stored
   * files. The tasks and submissions are locked first so no attachment can be added while the keys are
   * collected; the files go only after the commit, so a rolled-back delete never loses a file.
   */
  async remove(userId: string, classId: string): Promise<void> {
    const fileKeys = await this.dataSource.transaction(async (manager) => {
      const access = await this.access.lockClassRole(manager, classId, userId, [ClassRole.OWNER]);
      if (access.isPersonal) throw AppError.forbidden('The personal class cannot be deleted');
      await manager.query(
        `SELECT count(*) FROM (SELECT 1 FROM tasks WHERE class_id = $1 FOR UPDATE) locked`,
        [classId],
      );
      await manager.query(
        `SELECT count(*) FROM (
           SELECT 1 FROM submissions s JOIN tasks t ON t.id = s.task_id WHERE t.class_id = $1 FOR UPDATE OF s
         ) locked`,
        [classId],
      );
      const rows: { file_key: string }[] = await manager.query(
        `SELECT ta.file_key FROM task_attachments ta JOIN tasks t ON t.id = ta.task_id WHERE t.class_id = $1
         UNION ALL
         SELECT sa.file_key FROM submission_attachments sa
           JOIN submissions s ON s.id = sa.submission_id
           JOIN tasks t ON t.id = s.task_id
          WHERE t.class_id = $1`,
        [classId],
      );
      await manager.query(`DELETE FROM classes WHERE id = $1`, [classId]);
      return rows.map((row) => row.file_key);
    });
    // The class is already gone: a storage failure leaves orphaned files only (logged).
    await this.storage.discard(fileKeys, { classId });
  }

  /**
   * Joins as MEMBER. The class row is key-share locked so it cannot vanish between lookup and insert. A member
   * is told so (409) before the school is compared: for them the restriction decides nothing.
   */
  join(userId: string, inviteCode: string): Promise<ClassSummaryRow> {
    return this.dataSource.transaction(async (manager) => {
      const rows: JoinTargetRow[] = await manager.query(
        `SELECT c.id, c.school_id, u.school_id AS user_school_id,
                EXISTS (SELECT 1 FROM class_members m WHERE m.class_id = c.id AND m.user_id = u.id) AS is_member
           FROM classes c JOIN users u ON u.id = $2
          WHERE c.invite_code = $1
            FOR KEY SHARE OF c`,
        [normalizeInviteCode(inviteCode), userId],
      );
      if (rows.length === 0) throw AppError.notFound('Invite code');
      const target = rows[0];
      if (target.is_member) throw ALREADY_A_MEMBER();
      if (target.school_id !== null && target.school_id !== target.user_school_id) {
        throw AppError.forbidden('This class is restricted to another school');
      }
      // ON CONFLICT waits for a concurrent join of the same user to finish and then reports the duplicate.
      const inserted: unknown[] = await manager.query(
        `INSERT INTO class_members (class_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (class_id, user_id) DO NOTHING
         RETURNING user_id`,
        [target.id, userId, ClassRole.MEMBER],
      );
      if (inserted.length === 0) throw ALREADY_A_MEMBER();
      return getClassSummary(manager, userId, target.id);
    });
  }

  /**
   * A new invite code; the old one stops matching at commit. Under the class lock, so a caller demoted or
   * removed meanwhile gets 403, not a code. A code taken by another class is retried under a savepoint.
   */
  rotateInviteCode(access: ClassAccess, userId: string): Promise<string> {
    if (access.isPersonal) throw AppError.forbidden('A personal class has no invite code');
    return this.dataSource.transaction(async (manager) => {
      await this.access.lockClassRole(manager, access.classId, userId, MANAGER_ROLES);
      return withFreshInviteCode(async (code) => {
        await manager.query('SAVEPOINT new_invite_code');
        try {
          await manager.query(`UPDATE classes SET invite_code = $2, updated_at = now() WHERE id = $1`, [
            access.classId,
            code,
          ]);
          return code;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
          await manager.query('ROLLBACK TO SAVEPOINT new_invite_code');
          return undefined;
        }
      });
    });
  }

  /** 400 for an unknown school; the row stays locked against deletion until the class is committed. */
  private async lockSchool(manager: EntityManager, schoolId: string): Promise<void> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM schools WHERE id = $1 FOR KEY SHARE`, [
      schoolId,
    ]);
    if (rows.length === 0) throw AppError.validation('schoolId does not name a known school');
  }
}
