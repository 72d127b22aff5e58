import { Injectable } from '@nestjs/common';
import { QueryDeepPartialEntity } from 'typeorm';
import { TaskAccess } from '../access/access.service';
import { ClassesRepository } from '../classes/classes.repository';
import { AppError } from '../common/errors/app-error';
import { FileStorage } from '../files/file-storage';
import { GradeRelease } from '../submissions/grade-release';
import { GradeReleases } from '../submissions/grade-releases.service';
import { CreateDraftDto, CreateTaskDto, UpdateTaskDto, UpdateTaskStateDto } from './dto/task-write.dto';
import { TaskDetailResponse, TaskUserStateResponse } from './dto/task.response';
import { Task } from './entities/task.entity';
import { TaskReader } from './task-reader.service';
import { toUserStateResponse } from './tasks.mapper';
import { TasksRepository } from './tasks.repository';
import { assertIfMatch, IfMatchTags } from '../common/http/entity-tags';
import { Transactions, Tx } from '../database/transactions';

export const DEFAULT_DRAFT_TITLE = 'Untitled Draft';

const toDate = (value: string | null | undefined): Date | null => (value ? new Date(value) : null);

/** dueAt before startAt is refused (the table's check constraint says the same). */
export function assertTimesInOrder(startAt: Date | null, dueAt: Date | null): void {
  if (startAt && dueAt && dueAt < startAt) throw AppError.validation('dueAt must not be before startAt');
}

function assertPublishableTitle(title: string): void {
  if (title.trim().length === 0) throw AppError.validation('title must not be empty on a published task');
}

interface NewTask extends CreateDraftDto {
  title: string;
}

/** Creating, changing, publishing and deleting tasks, and the caller's personal task state. */
@Injectable()
export class TasksService {
  constructor(
    private readonly transactions: Transactions,
    private readonly reader: TaskReader,
    private readonly storage: FileStorage,
    private readonly tasks: TasksRepository,
    private readonly classes: ClassesRepository,
    private readonly gradeReleases: GradeReleases,
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
    const taskId = await this.transactions.run(async (manager) => {
      const blockedBy = await this.checkBlockedBy(manager, classId, null, fields.blockedBy ?? []);
      const id = await this.tasks.insert(manager, {
        classId,
        title: fields.title,
        description: fields.description ?? null,
        sourceText: fields.sourceText ?? null,
        startAt,
        dueAt,
        allowLateSubmission: fields.allowLateSubmission ?? true,
        gradeRelease: fields.gradeRelease ?? GradeRelease.IMMEDIATE,
        blockedBy,
        createdBy: userId,
        publish,
      });
      // No class: it was deleted meanwhile.
      if (id === null) throw AppError.notFound('Class');
      return id;
    });
    return this.reader.detail(taskId, userId);
  }

  /**
   * PATCH, and publication with the same optional fields. Publishing a published task changes only the given
   * fields: publishedAt stays, so no second publication happens. `access` comes from the route's
   * `@TaskManagerRoute()`, checked before the body was validated.
   */
  /**
   * `publish`: POST /tasks/:taskId/publish. `ifMatch`: checked against the task as the caller's GET shows it,
   * under the task row's lock, so of two writes with one tag only the first passes.
   */
  async update(
    { taskId, classId }: TaskAccess,
    userId: string,
    dto: UpdateTaskDto,
    { publish = false, ifMatch }: { publish?: boolean; ifMatch?: IfMatchTags } = {},
  ): Promise<TaskDetailResponse> {
    await this.transactions.run(async (manager) => {
      // The graph lock before the row lock, as a deletion takes them (see lockGraph).
      if (dto.blockedBy !== undefined) await this.tasks.lockGraph(manager, classId);
      const task = await this.tasks.lockLive(manager, taskId);
      if (ifMatch) assertIfMatch(ifMatch, await this.reader.detail(taskId, userId, manager));
      const publishing = publish && !task.isPublished;
      const changes: QueryDeepPartialEntity<Task> = {};
      if (dto.title !== undefined) changes.title = dto.title;
      if (dto.description !== undefined) changes.description = dto.description;
      if (dto.startAt !== undefined) changes.startAt = toDate(dto.startAt);
      if (dto.dueAt !== undefined) changes.dueAt = toDate(dto.dueAt);
      if (dto.allowLateSubmission !== undefined) changes.allowLateSubmission = dto.allowLateSubmission;
      if (dto.gradeRelease !== undefined) changes.gradeRelease = dto.gradeRelease;
      if (dto.sourceText !== undefined) changes.sourceText = dto.sourceText;
      if (task.isPublished || publishing) assertPublishableTitle(dto.title ?? task.title);
      assertTimesInOrder(
        dto.startAt !== undefined ? toDate(dto.startAt) : task.startAt,
        dto.dueAt !== undefined ? toDate(dto.dueAt) : task.dueAt,
      );
      if (dto.blockedBy !== undefined)
        changes.blockedBy = await this.checkBlockedBy(manager, task.classId, task.id, dto.blockedBy);
      if (publishing) {
        changes.isPublished = true;
        // TypeORM's documented raw-SQL value of a column, on our own object of changes.
        // eslint-disable-next-line no-restricted-syntax
        changes.publishedAt = () => 'now()::timestamptz(3)';
        // The cached Markdown draft belongs to the draft stage.
        await this.tasks.deleteMarkdown(manager, taskId);
      }
      await this.tasks.update(manager, taskId, changes);
      // MANUAL → IMMEDIATE: the grades held back go out now. The task row is locked first, as a grade locks it.
      if (task.gradeRelease === GradeRelease.MANUAL && dto.gradeRelease === GradeRelease.IMMEDIATE)
        await this.gradeReleases.releaseGraded(manager, taskId, {});
    });
    return this.reader.detail(taskId, userId);
  }

  /**
   * Without submissions the task and everything of it goes (hard delete); with submissions the record stays
   * so they can refer to it (soft delete), its body and attachments cleared. Files leave the disk after commit.
   */
  async remove({ taskId, classId }: TaskAccess): Promise<void> {
    const fileKeys = await this.transactions.run(async (manager) => {
      // A class deletion locks the class row and then every task of it; waiting for it before taking any task
      // lock keeps the two from each holding a task the other needs (the blocker here, a dependent there).
      if (!(await this.classes.lockKeyShare(manager, classId))) throw AppError.notFound('Task');
      // Its id leaves its dependents' blockedBy (unblockDependents) under the graph lock, taken next.
      await this.tasks.lockGraph(manager, classId);
      // The row lock also orders this against a first submission: its foreign key check waits for us.
      const task = await this.tasks.lockLive(manager, taskId);
      const fileKeys = await this.tasks.attachmentFileKeys(manager, taskId);
      await this.tasks.unblockDependents(manager, task);
      if (await this.tasks.hasSubmissions(manager, taskId)) await this.tasks.softDelete(manager, taskId);
      else await this.tasks.hardDelete(manager, taskId);
      return fileKeys;
    });
    await this.storage.discard(fileKeys, { taskId });
  }

  /** The first view sets viewedAt; later views change nothing. */
  async view({ taskId }: TaskAccess, userId: string): Promise<void> {
    if (!(await this.transactions.writeOne((db) => this.tasks.recordView(db, taskId, userId))))
      throw AppError.notFound('Task');
  }

  /**
   * Sets the given fields of the caller's state (tags, sortOrder); the others keep their values. `access`
   * comes from the route's `@TaskRoute()`.
   */
  async updateState(
    { taskId }: TaskAccess,
    userId: string,
    dto: UpdateTaskStateDto,
  ): Promise<TaskUserStateResponse> {
    const row = await this.transactions.writeOne((db) =>
      this.tasks.saveState(db, taskId, userId, {
        tags: dto.tags ?? null,
        sortOrder: dto.sortOrder ?? null,
        setSortOrder: dto.sortOrder !== undefined,
      }),
    );
    if (!row) throw AppError.notFound('Task');
    return toUserStateResponse(row);
  }

  /**
   * `blockedBy` of task `taskId` (null: a task being created) is valid: existing, not deleted tasks of the same
   * class, not the task itself, and no cycle anywhere upstream (recursive walk of the whole graph).
   */
  private async checkBlockedBy(
    manager: Tx,
    classId: string,
    taskId: string | null,
    blockedBy: string[],
  ): Promise<string[]> {
    if (blockedBy.length === 0) return [];
    if (taskId !== null && blockedBy.includes(taskId))
      throw AppError.validation('blockedBy: a task cannot block itself');
    await this.tasks.lockGraph(manager, classId);
    if ((await this.tasks.countLiveInClass(manager, blockedBy, classId)) !== blockedBy.length)
      throw AppError.validation('blockedBy must name existing tasks of the same class');
    if (taskId === null) return blockedBy;
    // Reaching the task itself from the new blockers closes a cycle.
    if (await this.tasks.wouldCycle(manager, blockedBy, taskId))
      throw AppError.validation('blockedBy would create a cycle of blocking tasks');
    return blockedBy;
  }
}
