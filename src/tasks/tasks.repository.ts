import { Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, QueryDeepPartialEntity } from 'typeorm';
import { listedTaskSql, memberDeadlineSql, roleSeesTaskSql, taskLockedSql } from '../access/task-rules.sql';
import { ClassRole } from '../classes/entities/class-member.entity';
import { AppError } from '../common/errors/app-error';
import { isoSql } from '../common/utils/time';
import { AttachmentJson, attachmentsJsonSql } from '../files/attachments.sql';
import { affected, Db, entityManager, one, Prepared, rows } from '../database/sql';
import { TaskAttachment } from './entities/task-attachment.entity';
import { GradeRelease } from '../submissions/grade-release';
import { Task } from './entities/task.entity';
import { Tx } from '../database/transactions';

/**
 * One task as the summary query answers it, with the caller's role, state and the counts; timestamps are
 * already the JSON strings (`isoSql`).
 */
export interface TaskRow {
  id: string;
  class_id: string;
  class_name: string;
  class_color: string;
  title: string;
  /** Selected only for a detail; null in lists. */
  description: string | null;
  source_text: string | null;
  start_at: string | null;
  due_at: string | null;
  /** The caller's own deadline (`myDueAt`). */
  my_due_at: string | null;
  has_extension: boolean;
  allow_late_submission: boolean;
  grade_release: GradeRelease;
  /** The rubric's maximum (numeric as a string); null when the task has no rubric. */
  rubric_max_points: string | null;
  blocked_by: string[];
  created_by: string | null;
  is_published: boolean;
  published_at: string | null;
  created_at: string;
  updated_at: string;
  role: ClassRole;
  member_count: number;
  submitted_count: number;
  /** Counted only for a detail, and only for OWNER and ADMIN (stats); null otherwise. */
  viewed_count: number | null;
  viewed_at: string | null;
  tags: string[] | null;
  sort_order: number | null;
  submitted_at: string | null;
  is_locked: boolean;
  /** Aggregated only for a detail (JSON: `createdAt` is a string); null in lists. */
  attachments: AttachmentJson[] | null;
}

export interface SummaryScope {
  /** Condition on `t` (tasks) and `m` (the caller's membership); `$1` is the caller's id. */
  where: string;
  /** Ordering over a tasks alias and the expression of the caller's own deadline there. */
  order: (task: string, myDueAt: string) => string;
  limit: number;
  /** Adds description, viewed count and attachments (one task). */
  detail: boolean;
}

export const BY_DUE_TIME = (a: string): string => `${a}.due_at ASC NULLS LAST, ${a}.created_at, ${a}.id`;
/** `GET /tasks/mine`: by the caller's own deadline. */
export const BY_MY_DUE_TIME = (a: string, myDueAt: string): string =>
  `${myDueAt} ASC NULLS LAST, ${a}.created_at, ${a}.id`;
export const NEWEST_FIRST = (a: string): string => `${a}.created_at DESC, ${a}.id DESC`;

/**
 * Tasks with everything a summary shows, in ONE statement whatever the number of tasks and members: counts
 * are aggregated inside the statement and the caller's state, submission and lock are joined (a detail's
 * attachments too).
 * Only classes the caller belongs to; never deleted tasks. Members and submissions count while the user is
 * still a member of the class.
 */
export function taskSummariesSql(scope: SummaryScope): string {
  return `
    WITH scoped AS (
      SELECT t.id, t.class_id, t.title, ${scope.detail ? 't.description' : 'NULL::text AS description'},
             t.source_text, t.start_at, t.due_at, t.allow_late_submission, t.grade_release, t.rubric_max_points, t.blocked_by,
             t.created_by, t.is_published, t.published_at, t.created_at, t.updated_at, m.role,
             mine.due_at AS my_due_at, mine.extended AS has_extension
        FROM tasks t
        JOIN class_members m ON m.class_id = t.class_id AND m.user_id = $1
        CROSS JOIN LATERAL ${memberDeadlineSql('t', '$1')} mine
       WHERE t.deleted_at IS NULL AND ${scope.where}
       ORDER BY ${scope.order('t', 'mine.due_at')}
       LIMIT ${scope.limit}
    ),
    -- Counted per class through the primary key (an IN over the classes made PostgreSQL scan every membership).
    member_counts AS (
      SELECT k.class_id, (SELECT count(*)::int FROM class_members cm WHERE cm.class_id = k.class_id) AS n
        FROM (SELECT DISTINCT class_id FROM scoped) k
    )
    SELECT st.id, st.class_id, st.title, st.description, st.source_text, ${isoSql('st.start_at')} AS start_at,
           ${isoSql('st.due_at')} AS due_at, ${isoSql('st.my_due_at')} AS my_due_at, st.has_extension,
           st.allow_late_submission, st.grade_release, st.rubric_max_points, st.blocked_by, st.created_by,
           st.is_published, ${isoSql('st.published_at')} AS published_at, ${isoSql('st.created_at')} AS created_at,
           ${isoSql('st.updated_at')} AS updated_at, st.role, c.name AS class_name, c.color AS class_color,
           COALESCE(mc.n, 0) AS member_count, COALESCE(sc.submitted_count, 0) AS submitted_count,
           ${
             scope.detail
               ? `CASE WHEN st.role <> 'MEMBER' THEN (SELECT count(*)::int FROM task_user_states v
                     JOIN class_members vm ON vm.class_id = st.class_id AND vm.user_id = v.user_id
                    WHERE v.task_id = st.id AND v.viewed_at IS NOT NULL) END`
               : 'NULL::int'
           } AS viewed_count,
           ${
             scope.detail ? attachmentsJsonSql('task_attachments', 'task_id', 'st.id') : 'NULL::json'
           } AS attachments,
           ${isoSql('us.viewed_at')} AS viewed_at, us.tags, us.sort_order,
           ${isoSql('ms.first_submitted_at')} AS submitted_at,
           ${taskLockedSql('st', 'st.role', '$1')} AS is_locked
      FROM scoped st
      JOIN classes c ON c.id = st.class_id
      LEFT JOIN member_counts mc ON mc.class_id = st.class_id
      -- Kept by triggers (migration TaskSubmissionCounts): counting members' submissions here cost more than
      -- the rest of a list.
      LEFT JOIN task_submission_counts sc ON sc.task_id = st.id
      LEFT JOIN task_user_states us ON us.task_id = st.id AND us.user_id = $1
      LEFT JOIN submissions ms ON ms.task_id = st.id AND ms.user_id = $1
     ORDER BY ${scope.order('st', 'st.my_due_at')}`;
}

/** Lists are bounded: the nearest deadlines first, at most this many tasks. */
export const TASK_LIST_LIMIT = 1000;

/** Published tasks as a list shows them: MEMBERs only started ones, OWNER and ADMIN scheduled ones too. */
const LISTED = listedTaskSql('t', 'm.role');

// Each read is one statement, prepared (see Prepared): planning it cost more than running it.
const LIST_FOR_CLASS = new Prepared(
  'tasks.list_for_class',
  taskSummariesSql({
    where: `t.class_id = $2 AND ${LISTED}`,
    order: BY_DUE_TIME,
    limit: TASK_LIST_LIMIT,
    detail: false,
  }),
);
const LIST_MINE = new Prepared(
  'tasks.list_mine',
  taskSummariesSql({ where: LISTED, order: BY_MY_DUE_TIME, limit: TASK_LIST_LIMIT, detail: false }),
);
/** The task, when the caller may see it (as AccessService.requireTaskAccess decides): no row otherwise. */
const DETAIL = new Prepared(
  'tasks.detail',
  taskSummariesSql({
    where: `t.id = $2 AND ${roleSeesTaskSql('t', 'm.role')}`,
    order: NEWEST_FIRST,
    limit: 1,
    detail: true,
  }),
);
const NEWEST_DRAFT = new Prepared(
  'tasks.newest_draft',
  taskSummariesSql({
    where: `t.class_id = $2 AND NOT t.is_published AND t.created_by = $1`,
    order: NEWEST_FIRST,
    limit: 1,
    detail: true,
  }),
);

/** The caller's personal state of a task with the time of the caller's first submission. */
export interface UserStateRow {
  viewed_at: string | null;
  tags: string[] | null;
  sort_order: number | null;
  submitted_at: string | null;
}

/**
 * `FROM` of a personal state write: the task `$1` while it is not deleted, key-share locked. A deletion that
 * holds the row makes the write wait and then find nothing (404), where the foreign key check failed (500).
 */
const LIVE_TASK_LOCKED = `FROM tasks t WHERE t.id = $1 AND t.deleted_at IS NULL FOR KEY SHARE OF t`;

export interface NewTaskRow {
  classId: string;
  title: string;
  description: string | null;
  sourceText: string | null;
  startAt: Date | null;
  dueAt: Date | null;
  allowLateSubmission: boolean;
  gradeRelease: GradeRelease;
  blockedBy: string[];
  createdBy: string;
  publish: boolean;
}

export interface StateChanges {
  tags: string[] | null;
  sortOrder: number | null;
  setSortOrder: boolean;
}

export interface NewAttachment {
  fileKey: string;
  originalName: string;
  mimeType: string | null;
  sizeBytes: number;
}

/** Tasks, their attachments, Markdown drafts and the users' personal task states. */
@Injectable()
export class TasksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  listForClass(userId: string, classId: string): Promise<TaskRow[]> {
    return rows(this.dataSource, LIST_FOR_CLASS, [userId, classId]);
  }

  listMine(userId: string): Promise<TaskRow[]> {
    return rows(this.dataSource, LIST_MINE, [userId]);
  }

  /** The task as `userId` sees it; null when the caller may not see it. */
  detail(userId: string, taskId: string, db: Db = this.dataSource): Promise<TaskRow | null> {
    return one(db, DETAIL, [userId, taskId]);
  }

  newestDraft(userId: string, classId: string): Promise<TaskRow | null> {
    return one(this.dataSource, NEWEST_DRAFT, [userId, classId]);
  }

  /** The task unless deleted; null otherwise. */
  findLive(taskId: string): Promise<Task | null> {
    return this.dataSource.getRepository(Task).findOneBy({ id: taskId, deletedAt: IsNull() });
  }

  /** The task row, locked until the transaction ends; 404 when it is gone or deleted meanwhile. */
  async lockLive(db: Tx, taskId: string): Promise<Task> {
    const task = await entityManager(db)
      .getRepository(Task)
      .findOne({ where: { id: taskId, deletedAt: IsNull() }, lock: { mode: 'pessimistic_write' } });
    if (!task) throw AppError.notFound('Task');
    return task;
  }

  /**
   * A new task in class `classId`, whose row is key-share locked: a deletion of the class that holds it makes
   * this wait and then find no class (null), where the foreign key check failed (500).
   */
  async insert(db: Db, task: NewTaskRow): Promise<string | null> {
    const row = await one<{ id: string }>(
      db,
      `INSERT INTO tasks (class_id, title, description, source_text, start_at, due_at, allow_late_submission,
                            grade_release, blocked_by, created_by, is_published, published_at)
         SELECT c.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $11 THEN now()::timestamptz(3) END
           FROM classes c WHERE c.id = $1 FOR KEY SHARE OF c
         RETURNING id`,
      [
        task.classId,
        task.title,
        task.description,
        task.sourceText,
        task.startAt,
        task.dueAt,
        task.allowLateSubmission,
        task.gradeRelease,
        task.blockedBy,
        task.createdBy,
        task.publish,
      ],
    );
    return row?.id ?? null;
  }

  /** Writes `changes` to the task row (updatedAt included); nothing when there are none. */
  async update(db: Db, taskId: string, changes: QueryDeepPartialEntity<Task>): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    await entityManager(db)
      .createQueryBuilder()
      .update(Task)
      .set(changes)
      .where('id = :taskId', { taskId })
      .execute();
  }

  /**
   * Changes to the `blocked_by` graph of a class run one at a time (transaction-scoped advisory lock), so two
   * concurrent edits cannot each pass the cycle check and together close a cycle. A transaction that also
   * locks task rows takes this lock first: removing a deleted task from its dependents locks their rows while
   * holding it, so a writer holding a dependent's row and waiting here would deadlock with it.
   */
  async lockGraph(db: Tx, classId: string): Promise<void> {
    await rows(db, `SELECT pg_advisory_xact_lock(hashtextextended('tasks.blocked_by:' || $1, 0))`, [classId]);
  }

  /** How many of `ids` are existing, not deleted tasks of the class. */
  async countLiveInClass(db: Db, ids: string[], classId: string): Promise<number> {
    const row = await one<{ found: number }>(
      db,
      `SELECT count(*)::int AS found FROM tasks WHERE id = ANY($1::uuid[]) AND class_id = $2 AND deleted_at IS NULL`,
      [ids, classId],
    );
    return row!.found;
  }

  /** Whether `taskId` is upstream of `blockers` (what they wait for, transitively): blocking on them cycles. */
  async wouldCycle(db: Db, blockers: string[], taskId: string): Promise<boolean> {
    const row = await one<{ cycle: boolean }>(
      db,
      `WITH RECURSIVE upstream(id) AS (
       SELECT unnest($1::uuid[])
       UNION
       SELECT b.id
         FROM upstream u
         JOIN tasks t ON t.id = u.id AND t.deleted_at IS NULL
         CROSS JOIN LATERAL unnest(t.blocked_by) AS b(id)
     )
     SELECT EXISTS (SELECT 1 FROM upstream WHERE id = $2) AS cycle`,
      [blockers, taskId],
    );
    return row!.cycle;
  }

  /**
   * A deleted task blocks nothing any more: it leaves the `blockedBy` of the tasks of its class. The caller
   * holds the graph lock (`lockGraph`), taken before the task's row lock.
   */
  async unblockDependents(db: Db, task: Pick<Task, 'id' | 'classId'>): Promise<void> {
    await rows(
      db,
      `UPDATE tasks SET blocked_by = array_remove(blocked_by, $1::uuid)
      WHERE class_id = $2 AND deleted_at IS NULL AND blocked_by @> ARRAY[$1::uuid]`,
      [task.id, task.classId],
    );
  }

  async hasSubmissions(db: Db, taskId: string): Promise<boolean> {
    const row = await one<{ submitted: boolean }>(
      db,
      `SELECT EXISTS (SELECT 1 FROM submissions WHERE task_id = $1) AS submitted`,
      [taskId],
    );
    return row!.submitted;
  }

  /** Keeps the record for its submissions; body, attachments and Markdown draft go. */
  async softDelete(db: Tx, taskId: string): Promise<void> {
    const entities = entityManager(db);
    await entities.delete(TaskAttachment, { taskId });
    await this.deleteMarkdown(db, taskId);
    await entities.update(
      Task,
      { id: taskId },
      { deletedAt: () => 'now()::timestamptz(3)', description: null, sourceText: null },
    );
  }

  /** The task and everything of it (ON DELETE CASCADE). */
  async hardDelete(db: Db, taskId: string): Promise<void> {
    await entityManager(db).delete(Task, { id: taskId });
  }

  /** The first view sets viewedAt; false when the task is gone. */
  async recordView(db: Db, taskId: string, userId: string): Promise<boolean> {
    const saved = await rows(
      db,
      `INSERT INTO task_user_states AS us (task_id, user_id, viewed_at)
       SELECT t.id, $2, now()::timestamptz(3) ${LIVE_TASK_LOCKED}
       ON CONFLICT (task_id, user_id) DO UPDATE SET viewed_at = COALESCE(us.viewed_at, EXCLUDED.viewed_at)
       RETURNING 1`,
      [taskId, userId],
    );
    return saved.length > 0;
  }

  /** Sets the given fields of the user's state; null when the task is gone. */
  saveState(db: Db, taskId: string, userId: string, changes: StateChanges): Promise<UserStateRow | null> {
    return one<UserStateRow>(
      db,
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
      [taskId, userId, changes.tags, changes.sortOrder, changes.setSortOrder],
    );
  }

  async deleteMarkdown(db: Db, taskId: string): Promise<void> {
    await rows(db, `DELETE FROM task_markdown_cache WHERE task_id = $1`, [taskId]);
  }

  async cacheMarkdown(db: Db, taskId: string, markdown: string, ttl: string): Promise<void> {
    await rows(
      db,
      `INSERT INTO task_markdown_cache (task_id, markdown, expires_at) VALUES ($1, $2, now()::timestamptz(3) + $3::interval)
       ON CONFLICT (task_id) DO UPDATE SET markdown = EXCLUDED.markdown, expires_at = EXCLUDED.expires_at`,
      [taskId, markdown, ttl],
    );
  }

  /** The Markdown draft unless it expired. */
  async cachedMarkdown(db: Db, taskId: string): Promise<string | null> {
    const row = await one<{ markdown: string }>(
      db,
      `SELECT markdown FROM task_markdown_cache WHERE task_id = $1 AND expires_at > now()::timestamptz(3)`,
      [taskId],
    );
    return row?.markdown ?? null;
  }

  /** Removes the expired Markdown drafts; answers how many. */
  purgeExpiredMarkdown(): Promise<number> {
    return affected(
      this.dataSource,
      `DELETE FROM task_markdown_cache WHERE expires_at <= now()::timestamptz(3)`,
    );
  }

  /** Oldest first. */
  listAttachments(taskId: string): Promise<TaskAttachment[]> {
    return this.dataSource.getRepository(TaskAttachment).find({
      where: { taskId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  async attachmentFileKeys(db: Db, taskId: string): Promise<string[]> {
    const attachments = await entityManager(db).find(TaskAttachment, {
      where: { taskId },
      select: { fileKey: true },
    });
    return attachments.map((attachment) => attachment.fileKey);
  }

  countAttachments(db: Db, taskId: string): Promise<number> {
    return entityManager(db).count(TaskAttachment, { where: { taskId } });
  }

  addAttachment(db: Db, taskId: string, uploadedBy: string, file: NewAttachment): Promise<TaskAttachment> {
    const entities = entityManager(db);
    return entities.save(
      entities.create(TaskAttachment, { taskId, uploadedBy, ...file, sizeBytes: String(file.sizeBytes) }),
    );
  }

  /** The removed attachment's file key; null when the task has no such attachment. */
  async deleteAttachment(db: Db, taskId: string, attachmentId: string): Promise<string | null> {
    const row = await one<{ file_key: string }>(
      db,
      `DELETE FROM task_attachments WHERE id = $1 AND task_id = $2 RETURNING file_key`,
      [attachmentId, taskId],
    );
    return row?.file_key ?? null;
  }
}

/** Imported by the modules that use this repository (see ClassesRepositoryModule). */
@Module({ providers: [TasksRepository], exports: [TasksRepository] })
export class TasksRepositoryModule {}
