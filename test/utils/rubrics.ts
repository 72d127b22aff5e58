import type { RubricCriterionJson } from '../../src/tasks/task-rubrics.repository';
import { TestApp } from './test-app';
import { TestUser } from './users';

/** Rubric as the API answers it. */
export interface RubricJson {
  taskId: string;
  criteria: RubricCriterionJson[];
  maxPoints: number;
  createdAt: string;
  updatedAt: string;
}

/** A rubric body: two criteria, levels given out of order; its maximum is 5 + 4.5. */
export const ESSAY_RUBRIC = {
  criteria: [
    {
      title: 'Argument',
      description: 'A clear thesis, supported',
      levels: [
        { title: 'Fair', points: 3 },
        { title: 'Strong', points: 5 },
        { title: 'Weak', points: 1 },
      ],
    },
    {
      title: 'Style',
      levels: [
        { title: 'Rough', points: 0 },
        { title: 'Polished', points: 4.5 },
      ],
    },
  ],
};
export const ESSAY_MAX_POINTS = 9.5;

/** The write body that keeps every part of `rubric` as it is (ids given back). */
export const sameRubric = (rubric: RubricJson) => ({
  criteria: rubric.criteria.map(({ id, title, description, levels }) => ({
    id,
    title,
    description,
    levels: levels.map((level) => ({ ...level })),
  })),
});

/** PUT the rubric as `user`, asserting 200; answers it. */
export async function putRubric(
  ctx: TestApp,
  taskId: string,
  user: TestUser,
  body: object = ESSAY_RUBRIC,
): Promise<RubricJson> {
  const res = await ctx.http.put(`/tasks/${taskId}/rubric`).set('Authorization', user.auth).send(body);
  if (res.status !== 200) throw new Error(`PUT rubric answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as RubricJson;
}

/** The level of `rubric` titled `title` in its criterion titled `criterion`, as a grading names it. */
export function choose(rubric: RubricJson, criterion: string, level: string, comment?: string | null) {
  const found = rubric.criteria.find((c) => c.title === criterion);
  const chosen = found?.levels.find((l) => l.title === level);
  if (!found || !chosen) throw new Error(`No level ${criterion}/${level}`);
  return { criterionId: found.id, levelId: chosen.id, ...(comment === undefined ? {} : { comment }) };
}
