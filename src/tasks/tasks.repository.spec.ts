import { DataSource } from 'typeorm';
import { createTestDataSource, seedClass, TestDataSource } from '../../test/utils/test-data-source';
import { ClassRole } from '../classes/entities/class-member.entity';
import { one } from '../database/sql';
import { GradeRelease } from '../submissions/grade-release';
import { NewTaskRow, TasksRepository } from './tasks.repository';

describe('TasksRepository (real PostgreSQL)', () => {
  let source: TestDataSource;
  let db: DataSource;
  let tasks: TasksRepository;
  let ownerId: string;
  let classId: string;

  beforeAll(async () => {
    source = await createTestDataSource();
    db = source.db;
    tasks = new TasksRepository(db);
    ({ ownerId, classId } = await seedClass(db, 'owner@example.test'));
  });

  afterAll(() => source.close());

  const newTask = async (title: string, blockedBy: string[] = []): Promise<string> => {
    const task: NewTaskRow = {
      classId,
      title,
      description: null,
      sourceText: null,
      startAt: null,
      dueAt: null,
      allowLateSubmission: true,
      gradeRelease: GradeRelease.MANUAL,
      blockedBy,
      createdBy: ownerId,
      publish: true,
    };
    return (await tasks.insert(db, task))!;
  };

  it('walks the blocking graph upstream to find a cycle', async () => {
    const a = await newTask('A');
    const b = await newTask('B', [a]);
    const c = await newTask('C', [b]);
    expect(await tasks.countLiveInClass(db, [a, b, c], classId)).toBe(3);
    // A blocked by C: C waits for B, which waits for A.
    expect(await tasks.wouldCycle(db, [c], a)).toBe(true);
    expect(await tasks.wouldCycle(db, [a], c)).toBe(false);
    await tasks.unblockDependents(db, { id: a, classId });
    expect(await tasks.wouldCycle(db, [c], a)).toBe(false);
  });

  it('answers the task as its owner sees it, and nothing for a task that does not exist', async () => {
    const id = await newTask('Visible');
    expect(await tasks.detail(ownerId, id)).toMatchObject({
      id,
      title: 'Visible',
      role: ClassRole.OWNER,
      grade_release: GradeRelease.MANUAL,
    });
    const missing = '00000000-0000-4000-8000-000000000000';
    expect(await tasks.detail(ownerId, missing)).toBeNull();
    expect(await tasks.recordView(db, missing, ownerId)).toBe(false);
    expect(await tasks.recordView(db, id, ownerId)).toBe(true);
    expect(
      await tasks.saveState(db, id, ownerId, { tags: ['x'], sortOrder: null, setSortOrder: false }),
    ).toMatchObject({ tags: ['x'], sort_order: null });
  });

  it('counts the expired Markdown drafts it purges', async () => {
    const fresh = await newTask('Fresh');
    const stale = await newTask('Stale');
    await tasks.cacheMarkdown(db, fresh, '# fresh', '1 hour');
    await tasks.cacheMarkdown(db, stale, '# stale', '-1 hour');
    expect(await tasks.cachedMarkdown(db, stale)).toBeNull();
    expect(await tasks.purgeExpiredMarkdown()).toBe(1);
    expect(await tasks.cachedMarkdown(db, fresh)).toBe('# fresh');
    expect(await one(db, `SELECT 1 FROM task_markdown_cache WHERE task_id = $1`, [stale])).toBeNull();
  });
});
