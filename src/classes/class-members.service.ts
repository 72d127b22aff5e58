import { Injectable } from '@nestjs/common';
import { AccessService, ClassAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { sameUuid } from '../common/utils/uuid';
import { ClassesRepository, ClassMemberRow, ClassSummaryRow } from './classes.repository';
import { ClassRole } from './entities/class-member.entity';
import { Transactions, Tx } from '../database/transactions';

/**
 * Role changes, removals and transfers. Each runs in a transaction that first locks the class row through
 * AccessService.lockClassRole, so concurrent changes of one class run one after the other and each decides
 * on the current roles (two transfers at once: the second finds its caller no longer OWNER).
 */
@Injectable()
export class ClassMembersService {
  constructor(
    private readonly transactions: Transactions,
    private readonly access: AccessService,
    private readonly classes: ClassesRepository,
  ) {}

  list(classId: string): Promise<ClassMemberRow[]> {
    return this.classes.listMembers(classId);
  }

  /** OWNER only; ADMIN ↔ MEMBER. The OWNER's own role changes only by a transfer. */
  changeRole(
    access: ClassAccess,
    callerId: string,
    targetId: string,
    role: ClassRole.ADMIN | ClassRole.MEMBER,
  ): Promise<ClassMemberRow> {
    if (access.isPersonal) throw AppError.forbidden('Roles cannot be changed in a personal class');
    return this.transactions.run(async (manager) => {
      await this.access.lockClassRole(manager, access.classId, callerId, [ClassRole.OWNER]);
      const current = await this.requireMemberRole(
        manager,
        access.classId,
        targetId,
        AppError.notFound('Member'),
      );
      if (current === ClassRole.OWNER) {
        throw AppError.validation("The owner's role cannot be changed; transfer ownership instead");
      }
      await this.classes.setMemberRole(manager, access.classId, targetId, role);
      return this.classes.getMember(manager, access.classId, targetId);
    });
  }

  /** Removal by a manager, or leaving; who may remove whom is AccessService.assertCanRemoveMember. */
  remove(classId: string, callerId: string, targetId: string): Promise<void> {
    return this.transactions.run(async (manager) => {
      const caller = await this.access.lockClassRole(manager, classId, callerId);
      const targetRole = await this.requireMemberRole(
        manager,
        classId,
        targetId,
        AppError.notFound('Member'),
      );
      this.access.assertCanRemoveMember(caller, callerId, targetId, targetRole);
      await this.classes.removeMember(manager, classId, targetId);
    });
  }

  /**
   * Atomic: demote the OWNER (freeing the one-OWNER index), promote the target, move classes.owner_id; the
   * deferred owner foreign key checks the three together at commit. Answers the class as the caller now sees it.
   */
  transfer(access: ClassAccess, callerId: string, newOwnerId: string): Promise<ClassSummaryRow> {
    if (access.isPersonal) throw AppError.forbidden('A personal class cannot be transferred');
    return this.transactions.run(async (manager) => {
      const { classId } = await this.access.lockClassRole(manager, access.classId, callerId, [
        ClassRole.OWNER,
      ]);
      if (sameUuid(newOwnerId, callerId)) throw AppError.validation('You already own this class');
      await this.requireMemberRole(
        manager,
        classId,
        newOwnerId,
        AppError.validation('newOwnerId is not a member'),
      );
      await this.classes.setMemberRole(manager, classId, callerId, ClassRole.ADMIN);
      await this.classes.setMemberRole(manager, classId, newOwnerId, ClassRole.OWNER);
      await this.classes.setOwner(manager, classId, newOwnerId);
      return this.classes.getSummary(manager, callerId, classId);
    });
  }

  private async requireMemberRole(
    manager: Tx,
    classId: string,
    userId: string,
    notMember: AppError,
  ): Promise<ClassRole> {
    const role = await this.classes.findMemberRole(manager, classId, userId);
    if (role === null) throw notMember;
    return role;
  }
}
