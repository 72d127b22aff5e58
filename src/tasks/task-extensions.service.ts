import { Injectable } from '@nestjs/common';
import { TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { ExtensionResponse, PutExtensionDto } from './dto/extension.dto';
import { TaskExtensionsRepository } from './task-extensions.repository';
import { toExtensionResponse } from './tasks.mapper';
import { Transactions } from '../database/transactions';

/** Members' own deadlines. `access` comes from the routes' `@TaskManagerRoute()`. */
@Injectable()
export class TaskExtensionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly extensions: TaskExtensionsRepository,
  ) {}

  /**
   * Creates or replaces the member's extension; TASK_EXTENDED goes to the member, in the same transaction, when
   * the extension is new or its dueAt moved. Writes for one member run one at a time (the member lock), so two
   * concurrent PUTs leave one row and at most one notice per change of dueAt.
   */
  put(
    { taskId, classId }: TaskAccess,
    memberId: string,
    callerId: string,
    dto: PutExtensionDto,
  ): Promise<ExtensionResponse> {
    const dueAt = new Date(dto.dueAt);
    return this.transactions.run(async (db) => {
      const task = await this.extensions.lockTaskDue(db, taskId);
      if (!task) throw AppError.notFound('Task');
      if (!(await this.extensions.lockMember(db, classId, memberId))) throw AppError.notFound('Member');
      if (task.due_at === null) throw AppError.validation('The task has no dueAt to extend');
      if (dueAt <= task.due_at) throw AppError.validation("dueAt must be later than the task's dueAt");
      const { extension, dueChanged } = await this.extensions.upsert(db, {
        taskId,
        userId: memberId,
        classId,
        dueAt,
        allowLateSubmission: dto.allowLateSubmission ?? null,
        createdBy: callerId,
      });
      if (dueChanged) await this.extensions.notifyExtended(db, taskId, memberId);
      return toExtensionResponse(extension);
    });
  }

  async remove({ taskId }: TaskAccess, memberId: string): Promise<void> {
    if (!(await this.extensions.remove(taskId, memberId))) throw AppError.notFound('Extension');
  }

  async list({ taskId }: TaskAccess): Promise<ExtensionResponse[]> {
    return (await this.extensions.list(taskId)).map(toExtensionResponse);
  }
}
