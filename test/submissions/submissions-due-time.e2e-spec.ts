import { Client } from 'pg';
import { apiError as error } from '../utils/expect';
import { addMember, createClass } from '../utils/classes';
import { createTestDatabase, dropTestDatabase, withDatabase } from '../utils/database';
import { seedTask, submissionWrites, uploadSubmissionAttachment } from '../utils/submissions';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

const DUE_AT = '2030-01-01T12:00:00.000Z';

/**
 * The late rule at its boundary, which the real clock never hits: this instance's database clock stands still at
 * DUE_AT. Its connections put the schema test_clock before pg_catalog, so the service's `now()` is
 * test_clock.now(). (One instance per file: a second one in a file would take over the process-wide passport
 * strategy and leave it to a closed pool.)
 */
describe('late rule at the exact due time', () => {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
  let database: string;
  let ctx: TestApp;
  let member: TestUser;
  let classId: string;

  beforeAll(async () => {
    database = await createTestDatabase(adminUrl, process.env.TEST_TEMPLATE_DATABASE!);
    const client = new Client({ connectionString: withDatabase(adminUrl, database) });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA test_clock;
        CREATE FUNCTION test_clock.now() RETURNS timestamptz LANGUAGE sql STABLE
          AS $$ SELECT '${DUE_AT}'::timestamptz $$`);
    } finally {
      await client.end();
    }
    const url = new URL(withDatabase(adminUrl, database));
    url.searchParams.set('options', '-c search_path=test_clock,pg_catalog,public');
    // Background jobs stay quiet: on this clock they would see every task as due in 2030.
    ctx = await createTestApp(
      { MIGRATIONS_RUN: 'false', DELIVERY_POLL_INTERVAL_MS: '2000000000', SCHEDULER_CRON: '0 0 0 1 1 *' },
      { databaseUrl: url.toString() },
    );
    const owner = await createUser(ctx);
    member = await createUser(ctx);
    ({ id: classId } = await createClass(ctx, owner));
    await addMember(ctx, classId, member);
  });
  afterAll(async () => {
    await ctx?.close();
    await dropTestDatabase(adminUrl, database);
  });

  const writes = (taskId: string) => submissionWrites(ctx, taskId, member);

  it('runs on the frozen clock', async () => {
    const [{ now }] = await ctx.db.query(`SELECT now() AS now`);
    expect(now.toISOString()).toBe(DUE_AT);
  });

  it('accepts every write at exactly dueAt: only a write after dueAt is late (LATE_SUBMISSION_CLOSED)', async () => {
    const taskId = await seedTask(ctx, classId, { dueAt: DUE_AT, allowLateSubmission: false });
    const at = writes(taskId);
    await at.put().expect(200);
    const uploaded = await at.upload().expect(201);
    await at.remove(uploaded.body.id).expect(204);
  });

  it('refuses every write one millisecond after dueAt (the precision the API shows and stores)', async () => {
    const taskId = await seedTask(ctx, classId, {
      dueAt: '2030-01-01T13:00:00.000Z',
      allowLateSubmission: false,
    });
    const attachment = await uploadSubmissionAttachment(ctx, taskId, member);
    await ctx.db.query(`UPDATE tasks SET due_at = $2::timestamptz - interval '1 millisecond' WHERE id = $1`, [
      taskId,
      DUE_AT,
    ]);
    const after = writes(taskId);
    for (const res of [await after.put(), await after.upload(), await after.remove(attachment.id)]) {
      expect([res.status, res.body]).toEqual([403, error('LATE_SUBMISSION_CLOSED')]);
    }
  });
});
