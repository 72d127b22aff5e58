import { waitForLockWaiters } from '../utils/database';
import { apiError } from '../utils/expect';
import { useServiceProcesses } from '../utils/service-process';
import { createClassWithRoles } from '../utils/tasks';
import { waitFor } from '../utils/wait';

/** Any constant: the advisory lock the staged trigger waits on. */
const ANSWER_GATE = 770_011;

/**
 * The service as a process of its own, killed with SIGKILL after a keyed write committed and before its
 * answer was kept (staged: a trigger holds the statement that keeps the answer). The key must never run the
 * write again, on any instance, however long afterwards.
 */
describe('Idempotency-Key after kill -9 between the commit and the answer', () => {
  const { ctx, start } = useServiceProcesses();

  it('a retry gets 409 while the claim is fresh, then 409 IDEMPOTENCY_ANSWER_NOT_KEPT; the class is created once', async () => {
    const { owner } = await createClassWithRoles(ctx);
    const classes = async (): Promise<number> =>
      (
        await ctx.db.query(`SELECT count(*)::int AS n FROM classes WHERE owner_id = $1 AND name = 'Once'`, [
          owner.id,
        ])
      )[0].n;
    const service = await start();
    await ctx.db.query(`
      CREATE FUNCTION hold_kept_answer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(${ANSWER_GATE}); RETURN NEW; END $$;
      CREATE TRIGGER hold_kept_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW
        WHEN (NEW.response_status IS NOT NULL) EXECUTE FUNCTION hold_kept_answer();
    `);
    const gate = ctx.db.createQueryRunner();
    await gate.connect();
    try {
      await gate.query(`SELECT pg_advisory_lock($1)`, [ANSWER_GATE]);
      const post = fetch(`http://127.0.0.1:${service.port}/classes`, {
        method: 'POST',
        headers: {
          Authorization: owner.auth,
          'Idempotency-Key': 'crash-key',
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ name: 'Once' }),
      }).then(
        () => 'answered',
        () => 'connection lost',
      );
      // The class committed; the statement keeping its answer waits at the gate.
      await waitFor('the class to commit', async () => (await classes()) === 1);
      await waitForLockWaiters(ctx.db, 1);
      service.child.kill('SIGKILL');
      expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
      // Its database session would still keep the answer once the gate opens; a crash never sends it.
      await ctx.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE idempotency_keys%'`,
      );
      expect(await post).toBe('connection lost');
    } finally {
      await gate.query(`SELECT pg_advisory_unlock($1)`, [ANSWER_GATE]);
      await gate.release();
      await ctx.db.query(
        `DROP TRIGGER hold_kept_answer ON idempotency_keys; DROP FUNCTION hold_kept_answer();`,
      );
    }

    const retry = () =>
      ctx.http.post('/classes').set('Authorization', owner.auth).set('Idempotency-Key', 'crash-key').send({
        name: 'Once',
      });
    const early = await retry();
    expect([early.status, early.body]).toEqual([409, apiError('CONFLICT')]);
    // Long after: the claim counts as abandoned, yet its write committed, so nothing runs again.
    await ctx.db.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '1 hour' WHERE user_id = $1 AND key = 'crash-key'`,
      [owner.id],
    );
    const late = await retry();
    expect([late.status, late.body]).toEqual([409, apiError('IDEMPOTENCY_ANSWER_NOT_KEPT')]);
    expect(await classes()).toBe(1);
  });
});
