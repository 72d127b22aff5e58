import {
  apiError,
  ISO_TIMESTAMP,
  MAIL_LINK,
  registerThroughMail,
  RegisteredUser,
  useAppWithMailCapture,
  tokenFromMail,
  uniqueEmail,
  userShape,
  UUID_PATTERN,
} from '../utils/accounts';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseSettingValue, runCommand, UsageError } from '../../src/cli/commands';
import { CliResult, runCli } from '../utils/cli';

/**
 * The operator CLI as a child process against the test database. Each call starts a process (a few seconds
 * with ts-node), so independent commands run side by side.
 */
describe('operator CLI', () => {
  // Each command is a process of its own; on a busy machine a few of them side by side take a while.
  jest.setTimeout(180_000);

  const { ctx, smtp } = useAppWithMailCapture();
  let user: RegisteredUser;
  let pendingRegistration: string;
  beforeAll(async () => {
    user = await registerThroughMail(ctx, smtp);
    const email = uniqueEmail('pending');
    await ctx.http.post('/auth/register').send({ email }).expect(200);
    pendingRegistration = tokenFromMail(ctx, await smtp.waitFor(email), MAIL_LINK.registration);
  });

  const cliWith = (env: Record<string, string>, ...args: string[]): Promise<CliResult> =>
    runCli(ctx, env, ...args);
  const cli = (...args: string[]): Promise<CliResult> => cliWith({}, ...args);
  const json = (result: CliResult): unknown => {
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(result.stdout);
  };
  const failure = (result: CliResult, code: number, message: RegExp) => {
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  };

  it('closes registration, deactivates a user and adds a school, with effect at once', async () => {
    const [addSchool, close, deactivate, badValue] = await Promise.all([
      cli('schools:add', '  Springfield High  '),
      cli('settings:set', 'auth.registration_open', 'false'),
      cli('users:deactivate', ` ${user.email.toUpperCase()} `),
      cli('settings:set', 'auth.registration_open', 'maybe'),
    ]);

    expect(json(addSchool)).toEqual({
      id: expect.stringMatching(UUID_PATTERN),
      name: 'Springfield High',
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect((await ctx.http.get('/schools')).body).toEqual([json(addSchool)]);

    expect(json(close)).toEqual({ key: 'auth.registration_open', value: false });
    const register = await ctx.http.post('/auth/register').send({ email: uniqueEmail() });
    expect(register.status).toBe(403);
    expect(register.body).toEqual(apiError('REGISTRATION_CLOSED'));
    const complete = await ctx.http
      .post('/auth/register/complete')
      .send({ token: pendingRegistration, password: 'a fine password' });
    expect(complete.status).toBe(403);
    expect(complete.body).toEqual(apiError('REGISTRATION_CLOSED'));

    expect(json(deactivate)).toEqual(userShape(user.email, { id: user.id, isActive: false }));
    const revoked = await ctx.http.get('/users/me').set('Authorization', user.auth);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual(apiError('UNAUTHORIZED'));
    const login = await ctx.http.post('/auth/login').send({ email: user.email, password: user.password });
    expect(login.status).toBe(403);
    expect(login.body).toEqual(apiError('ACCOUNT_DEACTIVATED'));

    failure(badValue, 1, /auth\.registration_open must be true or false/);
  });

  it('opens registration and activates the user again; the old login token stays revoked', async () => {
    const [open, activate, badCommand, schools] = await Promise.all([
      cli('settings:set', 'auth.registration_open', 'true'),
      cli('users:activate', user.email),
      cli('users:promote', 'x'),
      cli('schools:list'),
    ]);
    expect(json(open)).toEqual({ key: 'auth.registration_open', value: true });
    await ctx.http.post('/auth/register').send({ email: uniqueEmail() }).expect(200);
    await ctx.http
      .post('/auth/register/complete')
      .send({ token: pendingRegistration, password: 'a fine password' })
      .expect(201);

    expect(json(activate)).toEqual(userShape(user.email, { id: user.id, isActive: true }));
    await ctx.http.get('/users/me').set('Authorization', user.auth).expect(401);
    const login = await ctx.http.post('/auth/login').send({ email: user.email, password: user.password });
    expect(login.status).toBe(200);
    await ctx.http.get('/users/me').set('Authorization', `Bearer ${login.body.token}`).expect(200);

    failure(badCommand, 2, /Unknown command "users:promote"[\s\S]*Usage/);
    expect(json(schools)).toEqual([expect.objectContaining({ name: 'Springfield High' })]);
    expect(json(await cli('settings:get'))).toEqual([{ key: 'auth.registration_open', value: true }]);
  });

  it('tells a wrong invocation with the usage (exit 2) before it reaches for the database', async () => {
    // Nothing listens there: a command that got as far as the database would fail with exit 1.
    const unreachable = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    const results = await Promise.all([
      cliWith(unreachable),
      cliWith(unreachable, 'users:promote', 'x'),
      cliWith(unreachable, 'schools:add'),
    ]);
    for (const result of results) failure(result, 2, /^Error: .+\nUsage: npm run cli/);
  });

  describe('commands in process (edge cases)', () => {
    const run = (...argv: string[]) => runCommand(ctx.app, argv);

    it('database:migrate names the latest migration, that of the last file of migrations/', async () => {
      const files = readdirSync(join(__dirname, '..', '..', 'migrations')).filter((name) =>
        name.endsWith('.ts'),
      );
      const timestamp = files.sort().at(-1)!.split('-')[0];
      expect(await run('database:migrate')).toEqual({
        latest: expect.stringMatching(new RegExp(`${timestamp}$`)),
      });
    });

    it.each([
      [[], /No command given/],
      [['users:promote', 'x'], /Unknown command/],
      [['schools:add'], /Expected <name>/],
      [['schools:list', 'extra'], /Expected no arguments/],
      [['settings:set', 'only-key'], /Expected <key> <value>/],
      [['settings:get', 'a', 'b'], /at most one/],
      [['users:activate'], /Expected <email>/],
      [['database:remove-embedded'], /Expected --yes/],
      [['database:remove-embedded', 'now'], /Expected --yes/],
    ])('%j is a usage error', async (argv, message) => {
      await expect(run(...argv)).rejects.toThrow(UsageError);
      await expect(run(...argv)).rejects.toThrow(message);
    });

    it('removes no database of DATABASE_URL: only an embedded one', async () => {
      await expect(run('database:remove-embedded', '--yes')).rejects.toThrow(/DATABASE_URL is set/);
    });

    it('reports unknown users and settings, bad keys, bad values and duplicate schools', async () => {
      await expect(run('users:deactivate', 'nobody@example.com')).rejects.toThrow(/User not found/);
      await expect(run('settings:get', 'no.such.setting')).rejects.toThrow(/not found/);
      await expect(run('settings:set', 'bad key!', '1')).rejects.toThrow(/setting key/);
      await expect(run('settings:set', 'auth.registration_open', '"true"')).rejects.toThrow(/true or false/);
      await expect(run('schools:add', '   ')).rejects.toThrow(/1 to 200/);
      await run('schools:add', 'Shelbyville Elementary');
      await expect(run('schools:add', 'Shelbyville Elementary')).rejects.toThrow(/already exists/);
    });

    it('stores any other setting, parsed as JSON when it parses', async () => {
      expect(await run('settings:set', 'ui.banner', 'Welcome back')).toEqual({
        key: 'ui.banner',
        value: 'Welcome back',
      });
      expect(await run('settings:set', 'ui.limits', '{"a":[1,2]}')).toEqual({
        key: 'ui.limits',
        value: { a: [1, 2] },
      });
      expect(await run('settings:get', 'ui.limits')).toEqual({ key: 'ui.limits', value: { a: [1, 2] } });
      expect(parseSettingValue('42')).toBe(42);
      expect(parseSettingValue('false')).toBe(false);
      expect(parseSettingValue('{oops')).toBe('{oops');
    });
  });
});
