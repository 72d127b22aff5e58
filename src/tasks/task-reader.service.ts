import { Injectable } from '@nestjs/common';
import { AccessService } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { MyTaskSummaryResponse, TaskDetailResponse, TaskSummaryResponse } from './dto/task.response';
import { toDetailResponse, toMySummaryResponse, toSummaryResponse } from './tasks.mapper';
import { TasksRepository } from './tasks.repository';
import { Db } from '../database/sql';

/** Reads tasks as the caller sees them. */
@Injectable()
export class TaskReader {
  constructor(
    private readonly tasks: TasksRepository,
    private readonly access: AccessService,
  ) {}

  /**
   * One statement for a member: the list only has rows of classes the caller belongs to, so AccessService is
   * asked (404 no class, 403 not a member) only when it is empty.
   */
  async listForClass(classId: string, userId: string): Promise<TaskSummaryResponse[]> {
    const rows = await this.tasks.listForClass(userId, classId);
    if (rows.length === 0) await this.access.requireClassRole(classId, userId);
    return rows.map(toSummaryResponse);
  }

  /** Across all the caller's classes. */
  async listMine(userId: string): Promise<MyTaskSummaryResponse[]> {
    return (await this.tasks.listMine(userId)).map(toMySummaryResponse);
  }

  /**
   * GET /tasks/:taskId: 404 when the caller may not see it (a MEMBER and a draft, say); records no view.
   * One statement when the caller may see the task; only otherwise AccessService tells why not (404, 403).
   */
  async get(taskId: string, userId: string): Promise<TaskDetailResponse> {
    const row = await this.tasks.detail(userId, taskId);
    if (row) return toDetailResponse(row);
    await this.access.requireTaskAccess(taskId, userId);
    // Access was granted after all: the task became visible between the two statements.
    return this.detail(taskId, userId);
  }

  /** The task as `userId` sees it, whose access was already checked; `db`: a transaction to read in. */
  async detail(taskId: string, userId: string, db?: Db): Promise<TaskDetailResponse> {
    const row = await this.tasks.detail(userId, taskId, db);
    if (!row) throw AppError.notFound('Task');
    return toDetailResponse(row);
  }

  async newestDraft(classId: string, userId: string): Promise<TaskDetailResponse | null> {
    const row = await this.tasks.newestDraft(userId, classId);
    return row ? toDetailResponse(row) : null;
  }
}
