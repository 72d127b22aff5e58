import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccessService } from '../access/access.service';
import { roleSeesTaskSql } from '../access/task-rules.sql';
import { AppError } from '../common/errors/app-error';
import { MyTaskSummaryResponse, TaskDetailResponse, TaskSummaryResponse } from './dto/task.response';
import { PreparedStatement } from '../database/prepared-statement';
import { toDetailResponse, toMySummaryResponse, toSummaryResponse } from './tasks.mapper';
import { BY_DUE_TIME, NEWEST_FIRST, taskSummariesSql, TaskRow } from './tasks.sql';

/** Lists are bounded: the nearest deadlines first, at most this many tasks. */
export const TASK_LIST_LIMIT = 1000;

/** Published tasks as a list shows them: MEMBERs only started ones, OWNER and ADMIN scheduled ones too. */
const LISTED = `t.is_published AND ${roleSeesTaskSql('t', 'm.role')}`;

// Each read is one statement, prepared (see PreparedStatement): planning it cost more than running it.
const LIST_FOR_CLASS = new PreparedStatement<TaskRow>(
  'tasks.list_for_class',
  taskSummariesSql({
    where: `t.class_id = $2 AND ${LISTED}`,
    order: BY_DUE_TIME,
    limit: TASK_LIST_LIMIT,
    detail: false,
  }),
);
const LIST_MINE = new PreparedStatement<TaskRow>(
  'tasks.list_mine',
  taskSummariesSql({ where: LISTED, order: BY_DUE_TIME, limit: TASK_LIST_LIMIT, detail: false }),
);
/** The task, when the caller may see it (as AccessService.requireTaskAccess decides): no row otherwise. */
const DETAIL = new PreparedStatement<TaskRow>(
  'tasks.detail',
  taskSummariesSql({
    where: `t.id = $2 AND ${roleSeesTaskSql('t', 'm.role')}`,
    order: NEWEST_FIRST,
    limit: 1,
    detail: true,
  }),
);
const NEWEST_DRAFT = new PreparedStatement<TaskRow>(
  'tasks.newest_draft',
  taskSummariesSql({
    where: `t.class_id = $2 AND NOT t.is_published AND t.created_by = $1`,
    order: NEWEST_FIRST,
    limit: 1,
    detail: true,
  }),
);

/** Reads tasks as the caller sees them. */
@Injectable()
export class TaskReader {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
  ) {}

  /**
   * One statement for a member: the list only has rows of classes the caller belongs to, so AccessService is
   * asked (404 no class, 403 not a member) only when it is empty.
   */
  async listForClass(classId: string, userId: string): Promise<TaskSummaryResponse[]> {
    const rows = await LIST_FOR_CLASS.rows(this.dataSource, [userId, classId]);
    if (rows.length === 0) await this.access.requireClassRole(classId, userId);
    return rows.map(toSummaryResponse);
  }

  /** Across all the caller's classes. */
  async listMine(userId: string): Promise<MyTaskSummaryResponse[]> {
    return (await LIST_MINE.rows(this.dataSource, [userId])).map(toMySummaryResponse);
  }

  /**
   * GET /tasks/:taskId: 404 when the caller may not see it (a MEMBER and a draft, say); records no view.
   * One statement when the caller may see the task; only otherwise AccessService tells why not (404, 403).
   */
  async get(taskId: string, userId: string): Promise<TaskDetailResponse> {
    const [row] = await DETAIL.rows(this.dataSource, [userId, taskId]);
    if (row) return toDetailResponse(row);
    await this.access.requireTaskAccess(taskId, userId);
    // Access was granted after all: the task became visible between the two statements.
    return this.detail(taskId, userId);
  }

  /** The task as `userId` sees it, whose access was already checked. */
  async detail(taskId: string, userId: string): Promise<TaskDetailResponse> {
    const [row] = await DETAIL.rows(this.dataSource, [userId, taskId]);
    if (!row) throw AppError.notFound('Task');
    return toDetailResponse(row);
  }

  async newestDraft(classId: string, userId: string): Promise<TaskDetailResponse | null> {
    const [row] = await NEWEST_DRAFT.rows(this.dataSource, [userId, classId]);
    return row ? toDetailResponse(row) : null;
  }
}
