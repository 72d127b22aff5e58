import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { Transactions } from '../database/transactions';
import { PutRubricDto, RubricResponse } from './dto/rubric.dto';
import { CriterionWrite, LevelWrite, RubricIdsRow, TaskRubricsRepository } from './task-rubrics.repository';
import { toRubricResponse } from './tasks.mapper';

/** A replacement as it is written: every part with the id it keeps or a new one. */
export interface RubricPlan {
  criteria: CriterionWrite[];
  levels: LevelWrite[];
}

/**
 * The rubric `dto` written over the rubric whose parts are `current`: a part keeps its id when the write
 * names one of this rubric's (a level: one of the same criterion's); any other id is never stored, the part
 * gets a new one. Levels go by points, highest first (equal points in the order given). Two parts naming
 * the same id are refused.
 */
export function planRubric(dto: PutRubricDto, current: RubricIdsRow[]): RubricPlan {
  const levelsNow = new Map(current.map((row) => [row.criterion_id, new Set(row.level_ids)]));
  const criterionIds = idClaims('criteria', new Set(levelsNow.keys()));
  const levelIds = new Set<string>();
  const criteria: CriterionWrite[] = [];
  const levels: LevelWrite[] = [];
  dto.criteria.forEach((criterion, position) => {
    const id = criterionIds(criterion.id);
    criteria.push({ id, position, title: criterion.title, description: criterion.description ?? null });
    const levelId = idClaims('levels', levelsNow.get(id) ?? new Set(), levelIds);
    const ordered = criterion.levels
      .map((level, given) => ({ level, given }))
      .sort((a, b) => b.level.points - a.level.points || a.given - b.given);
    ordered.forEach(({ level }, place) =>
      levels.push({
        id: levelId(level.id),
        criterionId: id,
        position: place,
        title: level.title,
        points: level.points,
      }),
    );
  });
  return { criteria, levels };
}

/**
 * The id a part gets: the one it names when that is in `keepable`, else a new one. `named` collects the ids
 * given so far (across the criteria for levels), so one id given twice is refused.
 */
function idClaims(
  what: string,
  keepable: ReadonlySet<string>,
  named = new Set<string>(),
): (id: string | null | undefined) => string {
  return (id) => {
    if (id === undefined || id === null) return randomUUID();
    const key = id.toLowerCase();
    if (named.has(key)) throw AppError.validation(`${what}: the id ${id} is given twice`);
    named.add(key);
    return keepable.has(key) ? key : randomUUID();
  };
}

/** A task's rubric. `access` comes from the routes' access decorators. */
@Injectable()
export class TaskRubricsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly rubrics: TaskRubricsRepository,
  ) {}

  async get({ taskId }: TaskAccess): Promise<RubricResponse> {
    const rubric = await this.rubrics.find(taskId);
    if (!rubric) throw AppError.notFound('Rubric');
    return toRubricResponse(rubric);
  }

  /**
   * Creates or replaces the rubric in one transaction with the task's `rubric_max_points`. The task row is
   * locked first (gradings share-lock it first too), so the plan is made from the rubric as it stands.
   */
  put({ taskId }: TaskAccess, dto: PutRubricDto): Promise<RubricResponse> {
    return this.transactions.run(async (tx) => {
      if (!(await this.rubrics.lockTask(tx, taskId))) throw AppError.notFound('Task');
      const plan = planRubric(dto, await this.rubrics.currentIds(tx, taskId));
      await this.rubrics.replace(tx, taskId, plan.criteria, plan.levels);
      return toRubricResponse((await this.rubrics.find(taskId, tx))!);
    });
  }

  async remove({ taskId }: TaskAccess): Promise<void> {
    const removed = await this.transactions.run(async (tx) => {
      if (!(await this.rubrics.lockTask(tx, taskId))) throw AppError.notFound('Task');
      return this.rubrics.remove(tx, taskId);
    });
    if (!removed) throw AppError.notFound('Rubric');
  }
}
