import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { sameUuid } from '../common/utils/uuid';
import { AccessRepository, ClassRoleRow, TaskAccessRow } from './access.repository';
import { ClassRole, MANAGER_ROLES } from './class-roles';
import { Transactions, Tx } from '../database/transactions';

export interface ClassAccess {
  classId: string;
  role: ClassRole;
  isPersonal: boolean;
  /** OWNER or ADMIN of the class. */
  canManage: boolean;
}

export interface TaskAccess extends ClassAccess {
  taskId: string;
}

/** Access to one submission (`GET /submissions/:submissionId`): its task's access and its submitter. */
export interface SubmissionAccess extends TaskAccess {
  submissionId: string;
  submitterId: string;
}

/** Access to remove one attachment, of a task (`submitterId` null) or of a submission. */
export interface AttachmentAccess extends TaskAccess {
  attachmentId: string;
  submitterId: string | null;
}

/**
 * The one place that decides class roles. Every route keyed by a class, task, submission or file asks here.
 * Order of answers: missing resource 404, caller not a member 403, missing role 403.
 */
@Injectable()
export class AccessService {
  constructor(
    private readonly transactions: Transactions,
    private readonly repository: AccessRepository,
  ) {}

  /** Membership of the caller in a class, or 404 (no class) / 403 (not a member, or role not allowed). */
  async requireClassRole(
    classId: string,
    userId: string,
    allowed?: readonly ClassRole[],
  ): Promise<ClassAccess> {
    const row = await this.repository.classRole(this.transactions.autocommit, classId, userId);
    return this.decideClassRole(row, classId, allowed);
  }

  /**
   * `requireClassRole` inside the transaction of `manager`, with the class row locked FOR UPDATE until it
   * ends. Membership changes (roles, removal, transfer, deletion) take this lock first, so they run one at a
   * time per class and decide on the roles as they are now, not as the guard saw them before the transaction.
   */
  async lockClassRole(
    manager: Tx,
    classId: string,
    userId: string,
    allowed?: readonly ClassRole[],
  ): Promise<ClassAccess> {
    // Lock, then read in a second statement: after waiting for the lock PostgreSQL re-reads the locked row,
    // but not the rows joined to it, so a role read in the locking statement could be the one before the wait.
    await this.repository.lockClass(manager, classId);
    return this.decideClassRole(await this.repository.classRole(manager, classId, userId), classId, allowed);
  }

  /**
   * Who may remove whom: anyone may leave, except the OWNER, who is never removed
   * (ownership is transferred first); OWNER and ADMIN remove MEMBERs; only the OWNER removes ADMINs.
   */
  assertCanRemoveMember(
    caller: ClassAccess,
    callerId: string,
    targetId: string,
    targetRole: ClassRole,
  ): void {
    if (targetRole === ClassRole.OWNER) {
      throw AppError.forbidden('The owner cannot be removed; transfer ownership first');
    }
    if (sameUuid(targetId, callerId)) return;
    const allowed = targetRole === ClassRole.ADMIN ? [ClassRole.OWNER] : MANAGER_ROLES;
    if (!allowed.includes(caller.role)) throw AppError.forbidden();
  }

  /**
   * Access of the caller to a task. A MEMBER sees only published, not deleted, started tasks (else 404);
   * OWNER and ADMIN see drafts and scheduled tasks; deleted tasks are 404 for everyone.
   * `manage: true` requires OWNER or ADMIN (403 for a MEMBER who can see the task).
   */
  async requireTaskAccess(
    taskId: string,
    userId: string,
    options: { manage?: boolean } = {},
  ): Promise<TaskAccess> {
    return this.decideTaskAccess(taskId, await this.repository.taskAccess(taskId, userId), options);
  }

  /**
   * One submission: OWNER and ADMIN of the class read any, the submitter their own (while a member who can
   * see the task, as `GET /tasks/:taskId/submissions/me` asks); any other member 403. Unknown 404.
   */
  async requireSubmissionAccess(submissionId: string, userId: string): Promise<SubmissionAccess> {
    const row = await this.repository.submissionAccess(submissionId, userId);
    if (!row) throw AppError.notFound('Submission');
    const task = this.decideTaskAccess(row.task_id, row);
    const submitterId = row.submitter_id!;
    if (!task.canManage && !sameUuid(submitterId, userId)) {
      throw AppError.forbidden('Only the submitter and the OWNER/ADMIN of the class read a submission');
    }
    return { ...task, submissionId, submitterId };
  }

  /**
   * Removing one attachment, by the rules of the scoped deletes: a task attachment by OWNER and ADMIN of the
   * class; a submission attachment by its submitter only (who must still see the task; the late and lock
   * rules are the removal's own). Unknown 404.
   */
  async requireAttachmentRemoval(attachmentId: string, userId: string): Promise<AttachmentAccess> {
    const row = await this.repository.attachmentAccess(attachmentId, userId);
    if (!row) throw AppError.notFound('Attachment');
    const submitterId = row.submitter_id;
    const task = this.decideTaskAccess(row.task_id, row, { manage: submitterId === null });
    if (submitterId !== null && !sameUuid(submitterId, userId)) {
      throw AppError.forbidden('Only the submitter removes an attachment of a submission');
    }
    return { ...task, attachmentId, submitterId };
  }

  private decideTaskAccess(
    taskId: string,
    row: TaskAccessRow | null,
    options: { manage?: boolean } = {},
  ): TaskAccess {
    if (!row || row.deleted) throw AppError.notFound('Task');
    if (row.role === null) throw AppError.forbidden('You are not a member of this class');
    const canManage = MANAGER_ROLES.includes(row.role);
    if (!canManage && !row.visible_to_members) throw AppError.notFound('Task');
    if (options.manage && !canManage) throw AppError.forbidden();
    return { taskId, classId: row.class_id, role: row.role, isPersonal: row.is_personal, canManage };
  }

  private decideClassRole(
    row: ClassRoleRow | null,
    classId: string,
    allowed?: readonly ClassRole[],
  ): ClassAccess {
    if (!row) throw AppError.notFound('Class');
    const { role, is_personal: isPersonal } = row;
    if (role === null) throw AppError.forbidden('You are not a member of this class');
    if (allowed && !allowed.includes(role)) throw AppError.forbidden();
    return { classId, role, isPersonal, canManage: MANAGER_ROLES.includes(role) };
  }
}
