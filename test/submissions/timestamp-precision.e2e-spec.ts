import { addMember, createClass } from '../utils/classes';
import { putSubmission, seedTask } from '../utils/submissions';
import { useTestApp } from '../utils/test-app';
import { createUser } from '../utils/users';

/** Timestamps compare as the API shows them: to the millisecond, no finer. */
describe('timestamp precision', () => {
  const ctx = useTestApp();

  it('judges a submission made exactly at its deadline, to the millisecond shown, in time', async () => {
    const owner = await createUser(ctx);
    const member = await createUser(ctx);
    const { id: classId } = await createClass(ctx, owner, { name: 'Chemistry' });
    await addMember(ctx, classId, member);
    const taskId = await seedTask(ctx, classId, { dueAt: '2999-01-01T00:00:00.000Z' });
    const { firstSubmittedAt } = await putSubmission(ctx, taskId, member, 'on the dot');
    const isLate = async (dueAt: string): Promise<boolean> => {
      await ctx.db.query(`UPDATE tasks SET due_at = $2 WHERE id = $1`, [taskId, dueAt]);
      const res = await ctx.http
        .get(`/tasks/${taskId}/submissions/me`)
        .set('Authorization', member.auth)
        .expect(200);
      return (res.body as { isLate: boolean }).isLate;
    };

    // The deadline is the submission's time as shown: in time, whatever the clock said below a millisecond.
    expect(await isLate(firstSubmittedAt)).toBe(false);
    expect(await isLate(new Date(Date.parse(firstSubmittedAt) - 1).toISOString())).toBe(true);
  });

  it('stores every timestamp to the millisecond', async () => {
    const finer = await ctx.db.query(
      `SELECT table_name, column_name, datetime_precision FROM information_schema.columns
        WHERE table_schema = current_schema() AND data_type = 'timestamp with time zone'
          AND datetime_precision <> 3`,
    );
    expect(finer).toEqual([]);
  });
});
