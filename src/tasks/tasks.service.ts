import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AccessService, TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { isoSql } from '../common/utils/time';
import { FileStorage } from '../files/file-storage';
import { CreateDraftDto, CreateTaskDto, UpdateTaskDto, UpdateTaskStateDto } from './dto/task-write.dto';
import { TaskDetailResponse, TaskUserStateResponse } from './dto/task.response';
import { TaskAttachment } from './entities/task-attachment.entity';
import { TaskMarkdownCache } from './entities/task-markdown-cache.entity';
import { Task } from './entities/task.entity';
import { checkBlockedBy, lockGraph, lockLiveTask, unblockDependents, updateTask } from './task-writes';
import { TaskReader } from './task-reader.service';
import { toUserStateResponse, UserStateRow } from './tasks.mapper';

export const DEFAULT_DRAFT_TITLE = 'Untitled Draft';

const toDate = (value: string | null | undefined): Date | null => (value ? new Date(value) : null);

/** dueAt before startAt is refused (the table's check constraint says the same). */
export function assertTimesInOrder(startAt: Date | null, dueAt: Date | null): void {
  if (startAt && dueAt && dueAt < startAt) throw AppError.validation('dueAt must not be before startAt');
}

function assertPublishableTitle(title: string): void {
  if (title.trim().length === 0) throw AppError.validation('title must not be empty on a published task');
}

/**
 * `FROM` of a personal state write: the task `$1` while it is not deleted, key-share locked. A deletion that
 * holds the row makes the write wait and then find nothing (404), where the foreign key check failed (500).
 */
const LIVE_TASK_LOCKED = `FROM tasks t WHERE t.id = $1 AND t.deleted_at IS NULL FOR KEY SHARE OF t`;

interface NewTask extends CreateDraftDto {
  title: string;
}

/** Creating, changing, publishing and deleting tasks, and the caller's personal task state. */
@Injectable()
export class TasksService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: AccessService,
    private readonly reader: TaskReader,
    private readonly storage: FileStorage,
  ) {}

  /** Published at once (publishedAt = now). The class role was checked by the route guard. */
  create(classId: string, userId: string, dto: CreateTaskDto): Promise<TaskDetailResponse> {
    return this.insert(classId, userId, dto, true);
  }

  createDraft(classId: string, userId: string, dto: CreateDraftDto): Promise<TaskDetailResponse> {
    return this.insert(classId, userId, { ...dto, title: dto.title ?? DEFAULT_DRAFT_TITLE }, false);
  }

  private async insert(
    classId: string,
    userId: string,
    fields: NewTask,
    publish: boolean,
  ): Promise<TaskDetailResponse> {
    const startAt = toDate(fields.startAt);
    const dueAt = toDate(fields.dueAt);
    assertTimesInOrder(startAt, dueAt);
    if (publish) assertPublishableTitle(fields.title);
    const taskId = await this.dataSource.transaction(async (manager) => {
      const blockedBy = await checkBlockedBy(manager, classId, null, fields.blockedBy ?? []);
      // The class row key-share locked: a deletion of the class that holds it makes this wait and then find
      // no class (404), where the foreign key check failed (500).
      const [row] = await manager.query<{ id: string }[]>(
        `INSERT INTO tasks (class_id, title, description, source_text, start_at, due_at, allow_late_submission,
                            blocked_by, created_by, is_published, published_at)
         SELECT c.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10 THEN now() END
           FROM classes c WHERE c.id = $1 FOR KEY SHARE OF c
         RETURNING id`,
        [
          classId,
          fields.title,
          fields.description ?? null,
          fields.sourceText ?? null,
          startAt,
          dueAt,
          fields.allowLateSubmission ?? true,
          blockedBy,
          userId,
          publish,
        ],
      );
      if (!row) throw AppError.notFound('Class');
      return row.id;
    });
    return this.reader.detail(taskId, userId);
  }

  /**
   * PATCH, and publication with the same optional fields. Publishing a published task changes only the given
   * fields: publishedAt stays, so no second publication happens. `access` comes from the route's
   * `@RequireTaskAccess({ manage: true })`, checked before the body was validated.
   */
  async update(
    { taskId, classId }: TaskAccess,
    userId: string,
    dto: UpdateTaskDto,
    publish = false,
  ): Promise<TaskDetailResponse> {
    await this.dataSource.transaction(async (manager) => {
      // The graph lock before the row lock, as a deletion takes them (see lockGraph).
      if (dto.blockedBy !== undefined) await lockGraph(manager, classId);
      const task = await lockLiveTask(manager, taskId);
      const publishing = publish && !task.isPublished;
      const changes: QueryDeepPartialEntity<Task> = {};
      if (dto.title !== undefined) changes.title = dto.title;
      if (dto.description !== undefined) changes.description = dto.description;
      if (dto.startAt !== undefined) changes.startAt = toDate(dto.startAt);
      if (dto.dueAt !== undefined) changes.dueAt = toDate(dto.dueAt);
      if (dto.allowLateSubmission !== undefined) changes.allowLateSubmission = dto.allowLateSubmission;
      if (task.isPublished || publishing) assertPublishableTitle(dto.title ?? task.title);
      assertTimesInOrder(
        dto.startAt !== undefined ? toDate(dto.startAt) : task.startAt,
        dto.dueAt !== undefined ? toDate(dto.dueAt) : task.dueAt,
      );
      if (dto.blockedBy !== undefined)
        changes.blockedBy = await checkBlockedBy(manager, task.classId, task.id, dto.blockedBy);
      if (publishing) {
        changes.isPublished = true;
        changes.publishedAt = () => 'now()';
        // The cached Markdown draft belongs to the draft stage.
        await manager.delete(TaskMarkdownCache, { taskId });
      }
      await updateTask(manager, taskId, changes);
    });
    return this.reader.detail(taskId, userId);
  }

  /**
   * Without submissions the task and everything of it goes (hard delete); with submissions the record stays
   * so they can refer to it (soft delete), its body and attachments cleared. Files leave the disk after commit.
   */
  async remove(taskId: string, userId: string): Promise<void> {
    const { classId } = await this.access.requireTaskAccess(taskId, userId, { manage: true });
    const fileKeys = await this.dataSource.transaction(async (manager) => {
      // A class deletion locks the class row and then every task of it; waiting for it before taking any task
      // lock keeps the two from each holding a task the other needs (the blocker here, a dependent there).
      const classes = await manager.query<unknown[]>(`SELECT 1 FROM classes WHERE id = $1 FOR KEY SHARE`, [
        classId,
      ]);
      if (classes.length === 0) throw AppError.notFound('Task');
      // Its id leaves its dependents' blockedBy (unblockDependents) under the graph lock, taken next.
      await lockGraph(manager, classId);
      // The row lock also orders this against a first submission: its foreign key check waits for us.
      const task = await lockLiveTask(manager, taskId);
      const attachments = await manager.find(TaskAttachment, {
        where: { taskId },
        select: { fileKey: true },
      });
      await unblockDependents(manager, task);
      const [{ submitted }] = await manager.query<{ submitted: boolean }[]>(
        `SELECT EXISTS (SELECT 1 FROM submissions WHERE task_id = $1) AS submitted`,
        [taskId],
      );
      if (submitted) {
        await manager.delete(TaskAttachment, { taskId });
        await manager.delete(TaskMarkdownCache, { taskId });
        await manager.update(
          Task,
          { id: taskId },
          { deletedAt: () => 'now()', description: null, sourceText: null },
        );
      } else {
        await manager.delete(Task, { id: taskId });
      }
      return attachments.map((attachment) => attachment.fileKey);
    });
    await this.storage.discard(fileKeys, { taskId });
  }

  /** The first view sets viewedAt; later views change nothing. */
  async view(taskId: string, userId: string): Promise<void> {
    await this.access.requireTaskAccess(taskId, userId);
    const saved = await this.dataSource.query<unknown[]>(
      `INSERT INTO task_user_states AS us (task_id, user_id, viewed_at)
       SELECT t.id, $2, now() ${LIVE_TASK_LOCKED}
       ON CONFLICT (task_id, user_id) DO UPDATE SET viewed_at = COALESCE(us.viewed_at, EXCLUDED.viewed_at)
       RETURNING 1`,
      [taskId, userId],
    );
    if (saved.length === 0) throw AppError.notFound('Task');
  }

  /**
   * Sets the given fields of the caller's state (tags, sortOrder); the others keep their values. `access`
   * comes from the route's `@RequireTaskAccess()`.
   */
  async updateState(
    { taskId }: TaskAccess,
    userId: string,
    dto: UpdateTaskStateDto,
  ): Promise<TaskUserStateResponse> {
    const [row] = await this.dataSource.query<UserStateRow[]>(
      `WITH saved AS (
         INSERT INTO task_user_states AS us (task_id, user_id, tags, sort_order)
         SELECT t.id, $2, COALESCE($3::varchar[], '{}'), $4::double precision ${LIVE_TASK_LOCKED}
         ON CONFLICT (task_id, user_id) DO UPDATE SET
           tags = COALESCE($3::varchar[], us.tags),
           sort_order = CASE WHEN $5 THEN EXCLUDED.sort_order ELSE us.sort_order END
         RETURNING us.viewed_at, us.tags, us.sort_order
       )
       SELECT ${isoSql('saved.viewed_at')} AS viewed_at, saved.tags, saved.sort_order,
              ${isoSql('s.first_submitted_at')} AS submitted_at
         FROM saved LEFT JOIN submissions s ON s.task_id = $1 AND s.user_id = $2`,
      [taskId, userId, dto.tags ?? null, dto.sortOrder ?? null, dto.sortOrder !== undefined],
    );
    if (!row) throw AppError.notFound('Task');
    return toUserStateResponse(row);
  }
}
