import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccessService } from '../access/access.service';
import { memberSeesTaskSql } from '../access/task-rules.sql';
import { AppError } from '../common/errors/app-error';
import { MyTaskSummaryResponse, TaskDetailResponse, TaskSummaryResponse } from './dto/task.response';
import { TaskAttachment } from './entities/task-attachment.entity';
import { toDetailResponse, toMySummaryResponse, toSummaryResponse } from './tasks.mapper';
import { BY_DUE_TIME, NEWEST_FIRST, SummaryScope, taskSummariesSql, TaskRow } from './tasks.sql';

/** Lists are bounded: the nearest deadlines first, at most this many tasks. */
export const TASK_LIST_LIMIT = 1000;

/** Published tasks as a list shows them: MEMBERs only started ones, OWNER and ADMIN scheduled ones too. */
const LISTED = `t.is_published AND (m.role <> 'MEMBER' OR ${memberSeesTaskSql('t')})`;

/** Reads tasks as the caller sees them. */
@Injectable()
export class TaskReader {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
  ) {}

  async listForClass(classId: string, userId: string): Promise<TaskSummaryResponse[]> {
    const rows = await this.summaries(
      { where: `t.class_id = $2 AND ${LISTED}`, order: BY_DUE_TIME, limit: TASK_LIST_LIMIT, detail: false },
      [userId, classId],
    );
    return rows.map(toSummaryResponse);
  }

  /** Across all the caller's classes. */
  async listMine(userId: string): Promise<MyTaskSummaryResponse[]> {
    const rows = await this.summaries(
      { where: LISTED, order: BY_DUE_TIME, limit: TASK_LIST_LIMIT, detail: false },
      [userId],
    );
    return rows.map(toMySummaryResponse);
  }

  /** GET /tasks/:taskId: 404 when the caller may not see it (a MEMBER and a draft, say); records no view. */
  async get(taskId: string, userId: string): Promise<TaskDetailResponse> {
    await this.access.requireTaskAccess(taskId, userId);
    return this.detail(taskId, userId);
  }

  /** The task as `userId` sees it, whose access was already checked. */
  async detail(taskId: string, userId: string): Promise<TaskDetailResponse> {
    const detail = await this.findDetail(`t.id = $2`, [userId, taskId]);
    if (!detail) throw AppError.notFound('Task');
    return detail;
  }

  async newestDraft(classId: string, userId: string): Promise<TaskDetailResponse | null> {
    return this.findDetail(`t.class_id = $2 AND NOT t.is_published AND t.created_by = $1`, [userId, classId]);
  }

  private summaries(scope: SummaryScope, params: unknown[]): Promise<TaskRow[]> {
    return this.dataSource.query<TaskRow[]>(taskSummariesSql(scope), params);
  }

  /** The newest task matching `where`, with its attachments. */
  private async findDetail(where: string, params: unknown[]): Promise<TaskDetailResponse | null> {
    const [row] = await this.summaries({ where, order: NEWEST_FIRST, limit: 1, detail: true }, params);
    if (!row) return null;
    const attachments = await this.dataSource.getRepository(TaskAttachment).find({
      where: { taskId: row.id },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    return toDetailResponse(row, attachments);
  }
}
