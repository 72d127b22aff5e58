import { INestApplicationContext } from '@nestjs/common';
import { AuthUserCache } from '../../src/auth/auth-user.cache';
import { CLI_APPLICATION_NAME, createCliContext } from '../../src/cli/cli.module';
import { runCommand } from '../../src/cli/commands';
import { DeliveryWorker } from '../../src/notifications/delivery/delivery-worker';
import { SchoolsService } from '../../src/schools/schools.service';
import { createTestApp, TestApp } from '../utils/test-app';
import { waitFor } from '../utils/wait';

/** The operator CLI's Nest application context, in process, beside a running server on the same database. */
describe('operator CLI application context', () => {
  let ctx: TestApp;
  let cli: INestApplicationContext;
  beforeAll(async () => {
    ctx = await createTestApp();
    cli = await createCliContext(ctx.config, ctx.databaseUrl);
  });
  afterAll(async () => {
    await cli?.close();
    await ctx?.close();
  });

  const cliConnections = async (): Promise<number> => {
    const [row] = await ctx.db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
      [CLI_APPLICATION_NAME],
    );
    return row.n;
  };

  it('runs the commands with its own services and at most two connections of its own', async () => {
    const school = await runCommand(cli, ['schools:add', 'Context High']);
    expect(school).toMatchObject({ name: 'Context High' });
    expect(await runCommand(cli, ['schools:list'])).toEqual([school]);
    expect(await runCommand(cli, ['settings:get', 'auth.registration_open'])).toEqual({
      key: 'auth.registration_open',
      value: true,
    });
    // The server sees the school at once: both read the same table.
    expect((await ctx.http.get('/schools').expect(200)).body).toEqual([school]);
    expect(cli.get(SchoolsService)).not.toBe(ctx.app.get(SchoolsService));
    const connections = await cliConnections();
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(connections).toBeLessThanOrEqual(2);
  });

  it('holds nothing that runs by itself: no HTTP server, delivery worker or token-user cache listener', () => {
    expect('getHttpServer' in cli).toBe(false);
    expect(() => cli.get(DeliveryWorker, { strict: false })).toThrow();
    expect(() => cli.get(AuthUserCache, { strict: false })).toThrow();
  });

  it('leaves no connection open once closed', async () => {
    const closing = await createCliContext(ctx.config, ctx.databaseUrl);
    await runCommand(closing, ['schools:list']);
    await closing.close();
    await cli.close();
    // A closed connection leaves pg_stat_activity once its backend has exited, a moment after the client.
    await waitFor('the CLI connections to end', async () => (await cliConnections()) === 0, 5_000).catch(
      () => undefined,
    );
    expect(await cliConnections()).toBe(0);
  });
});
