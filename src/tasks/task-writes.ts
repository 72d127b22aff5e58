import { EntityManager, IsNull } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AppError } from '../common/errors/app-error';
import { Task } from './entities/task.entity';

/** The task row, locked until the transaction ends; 404 when it is gone or deleted meanwhile. */
export async function lockLiveTask(manager: EntityManager, taskId: string): Promise<Task> {
  const task = await manager.getRepository(Task).findOne({
    where: { id: taskId, deletedAt: IsNull() },
    lock: { mode: 'pessimistic_write' },
  });
  if (!task) throw AppError.notFound('Task');
  return task;
}

/** Writes `changes` to the task row (updatedAt included); nothing when there are none. */
export async function updateTask(
  manager: EntityManager,
  taskId: string,
  changes: QueryDeepPartialEntity<Task>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await manager.createQueryBuilder().update(Task).set(changes).where('id = :taskId', { taskId }).execute();
}

/**
 * Changes to the `blocked_by` graph of a class run one at a time (transaction-scoped advisory lock), so two
 * concurrent edits cannot each pass the cycle check and together close a cycle. A transaction that also locks
 * task rows takes this lock first: removing a deleted task from its dependents locks their rows while holding
 * it, so a writer holding a dependent's row and waiting here would deadlock with it.
 */
export async function lockGraph(manager: EntityManager, classId: string): Promise<void> {
  await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('tasks.blocked_by:' || $1, 0))`, [
    classId,
  ]);
}

/**
 * `blockedBy` of task `taskId` (null: a task being created) is valid: existing, not deleted tasks of the same
 * class, not the task itself, and no cycle anywhere upstream (recursive walk of the whole graph).
 */
export async function checkBlockedBy(
  manager: EntityManager,
  classId: string,
  taskId: string | null,
  blockedBy: string[],
): Promise<string[]> {
  if (blockedBy.length === 0) return [];
  if (taskId !== null && blockedBy.includes(taskId))
    throw AppError.validation('blockedBy: a task cannot block itself');
  await lockGraph(manager, classId);
  const [{ found }] = await manager.query<{ found: number }[]>(
    `SELECT count(*)::int AS found FROM tasks WHERE id = ANY($1::uuid[]) AND class_id = $2 AND deleted_at IS NULL`,
    [blockedBy, classId],
  );
  if (found !== blockedBy.length)
    throw AppError.validation('blockedBy must name existing tasks of the same class');
  if (taskId === null) return blockedBy;
  // Everything the new blockers wait for, transitively; reaching the task itself closes a cycle.
  const [{ cycle }] = await manager.query<{ cycle: boolean }[]>(
    `WITH RECURSIVE upstream(id) AS (
       SELECT unnest($1::uuid[])
       UNION
       SELECT b.id
         FROM upstream u
         JOIN tasks t ON t.id = u.id AND t.deleted_at IS NULL
         CROSS JOIN LATERAL unnest(t.blocked_by) AS b(id)
     )
     SELECT EXISTS (SELECT 1 FROM upstream WHERE id = $2) AS cycle`,
    [blockedBy, taskId],
  );
  if (cycle) throw AppError.validation('blockedBy would create a cycle of blocking tasks');
  return blockedBy;
}

/**
 * A deleted task blocks nothing any more: it leaves the `blockedBy` of the tasks of its class. The caller holds
 * the graph lock (`lockGraph`), taken before the task's row lock.
 */
export async function unblockDependents(manager: EntityManager, task: Task): Promise<void> {
  await manager.query(
    `UPDATE tasks SET blocked_by = array_remove(blocked_by, $1::uuid)
      WHERE class_id = $2 AND deleted_at IS NULL AND blocked_by @> ARRAY[$1::uuid]`,
    [task.id, task.classId],
  );
}
