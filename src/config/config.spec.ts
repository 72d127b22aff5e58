import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cts-config-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const load = (env: Record<string, string> = {}) => loadConfig({ DATA_DIR: dataDir, ...env });

  /** The error loadConfig throws for `env`; fails the test when it does not throw. */
  function errorFor(env: Record<string, string>): ConfigError {
    try {
      load(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return error as ConfigError;
    }
    throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
  }

  it('applies the defaults of CONTRACT §4', () => {
    const config = load();
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      appUrl: 'http://localhost:3000',
      dataDir,
      corsOrigins: true,
      logLevel: 'info',
      database: { url: null, poolSize: 10, migrationsRun: true },
      passwordHashConcurrency: Math.max(1, availableParallelism() - 1),
      authCacheTtlMs: 60000,
      mail: { smtpUrl: null },
      captcha: { enabled: false, secret: null },
      ai: { provider: 'local', timeoutMs: 20000, localThreads: 1 },
      telegram: { botToken: null },
      webhook: { allowPrivate: false },
      notifications: {
        reminderHoursBeforeDue: [24],
        schedulerCron: '0 * * * * *',
        pollIntervalMs: 1000,
        retryBaseSeconds: 30,
        maxAttempts: 6,
        retentionDays: 30,
      },
      uploads: { maxBytes: 20971520 },
      exports: { concurrency: 2, stallTimeoutMs: 60000 },
    });
  });

  it('generates a development JWT secret once into DATA_DIR and reuses it', () => {
    const first = load().jwt.secret;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(join(dataDir, 'jwt-secret'), 'utf8')).toBe(first);
    expect(load().jwt.secret).toBe(first);
  });

  it('refuses a development JWT secret file holding fewer than 32 characters, naming JWT_SECRET', () => {
    writeFileSync(join(dataDir, 'jwt-secret'), 'secret\n');
    expect(() => load()).toThrow(/JWT_SECRET.*jwt-secret/);
    writeFileSync(join(dataDir, 'jwt-secret'), '');
    expect(() => load()).toThrow(/JWT_SECRET/);
  });

  it('reads every variable', () => {
    const config = load({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/app',
      DATABASE_POOL_SIZE: '3',
      MIGRATIONS_RUN: 'false',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      DATABASE_QUERY_TIMEOUT_MS: '2000',
      DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '3000',
      DATABASE_IDLE_TIMEOUT_MS: '4000',
      DATABASE_KEEPALIVE_MS: '5000',
      JWT_SECRET: 'x'.repeat(32),
      PASSWORD_HASH_CONCURRENCY: '3',
      AUTH_CACHE_TTL_MS: '0',
      AUTH_LISTENER_HEARTBEAT_MS: '700',
      APP_URL: 'https://app.example/',
      SMTP_URL: 'smtps://user:pass@mail.example:465',
      MAIL_FROM: 'Tasks <tasks@example.com>',
      CAPTCHA_ENABLED: 'yes',
      CAPTCHA_SECRET: 's3cret',
      CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/verify',
      AI_PROVIDER: 'openai',
      AI_BASE_URL: 'http://127.0.0.1:9/v1',
      AI_API_KEY: 'key',
      AI_MODEL: 'model-x',
      AI_TIMEOUT_MS: '500',
      AI_LOCAL_THREADS: '2',
      TELEGRAM_BOT_TOKEN: 'bot',
      TELEGRAM_API_URL: 'http://127.0.0.1:9',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      REMINDER_HOURS_BEFORE_DUE: '1, 24,24',
      SCHEDULER_CRON: '*/5 * * * * *',
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_RETRY_BASE_SECONDS: '0',
      DELIVERY_MAX_ATTEMPTS: '2',
      DELIVERY_RETENTION_DAYS: '7',
      UPLOAD_MAX_BYTES: '1024',
      EXPORT_CONCURRENCY: '4',
      EXPORT_STALL_TIMEOUT_MS: '500',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 8080,
      appUrl: 'https://app.example',
      corsOrigins: ['https://a.example', 'https://b.example'],
      logLevel: 'warn',
      database: {
        url: 'postgres://u:p@db:5432/app',
        poolSize: 3,
        migrationsRun: false,
        connectTimeoutMs: 1000,
        queryTimeoutMs: 2000,
        idleInTransactionTimeoutMs: 3000,
        idleTimeoutMs: 4000,
        keepAliveMs: 5000,
      },
      jwt: { secret: 'x'.repeat(32) },
      passwordHashConcurrency: 3,
      authCacheTtlMs: 0,
      authListenerHeartbeatMs: 700,
      mail: { smtpUrl: 'smtps://user:pass@mail.example:465', from: 'Tasks <tasks@example.com>' },
      captcha: { enabled: true, secret: 's3cret', verifyUrl: 'http://127.0.0.1:9/verify' },
      ai: {
        provider: 'openai',
        baseUrl: 'http://127.0.0.1:9/v1',
        apiKey: 'key',
        model: 'model-x',
        timeoutMs: 500,
        localThreads: 2,
      },
      telegram: { botToken: 'bot', apiUrl: 'http://127.0.0.1:9' },
      webhook: { allowPrivate: true },
      notifications: {
        reminderHoursBeforeDue: [24, 1],
        schedulerCron: '*/5 * * * * *',
        pollIntervalMs: 50,
        retryBaseSeconds: 0,
        maxAttempts: 2,
        retentionDays: 7,
      },
      uploads: { maxBytes: 1024 },
      exports: { concurrency: 4, stallTimeoutMs: 500 },
    });
    // An explicit secret is never written to disk.
    expect(existsSync(join(dataDir, 'jwt-secret'))).toBe(false);
  });

  it('reads TRUST_PROXY in the forms Express takes; loopback by default', () => {
    expect(load().trustProxy).toEqual(['loopback']);
    expect(load({ TRUST_PROXY: '10.0.0.0/8, loopback, fd00::/8' }).trustProxy).toEqual([
      '10.0.0.0/8',
      'loopback',
      'fd00::/8',
    ]);
    expect(load({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(load({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  });

  it('refuses a DATA_DIR that cannot hold files, naming it', () => {
    const file = join(dataDir, 'not-a-directory');
    writeFileSync(file, '');
    for (const path of [file, join(file, 'data')]) {
      const error = errorFor({ DATA_DIR: path, JWT_SECRET: 'x'.repeat(32) });
      expect(error.variable).toBe('DATA_DIR');
      expect(error.message).toMatch(/^Invalid configuration: DATA_DIR must be a writable directory/);
    }
  });

  it('takes MAIL_FROM as a bare address or as "Name <address>"', () => {
    for (const from of ['tasks@example.org', '"Tasks, Inc." <tasks@example.org>']) {
      expect(load({ MAIL_FROM: from }).mail.from).toBe(from);
    }
  });

  it('defaults to 200 account requests per IP and minute, and 20 s, 300 s and 5 s HTTP timeouts', () => {
    expect(load()).toMatchObject({
      accountLimits: { loginPerIp: 200, routePerIp: 200 },
      http: { headersTimeoutMs: 20_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 5_000 },
    });
  });

  it('starts with CAPTCHA enabled but no secret (answered later with 503 CAPTCHA_UNAVAILABLE)', () => {
    expect(load({ CAPTCHA_ENABLED: 'true' }).captcha).toMatchObject({ enabled: true, secret: null });
  });

  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/app' }],
    ['DATABASE_URL', { DATABASE_URL: 'not a url' }],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }],
    ['MIGRATIONS_RUN', { MIGRATIONS_RUN: 'maybe' }],
    ['DATABASE_CONNECT_TIMEOUT_MS', { DATABASE_CONNECT_TIMEOUT_MS: '0' }],
    ['DATABASE_QUERY_TIMEOUT_MS', { DATABASE_QUERY_TIMEOUT_MS: '0' }],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', { DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' }],
    ['DATABASE_IDLE_TIMEOUT_MS', { DATABASE_IDLE_TIMEOUT_MS: 'soon' }],
    ['DATABASE_KEEPALIVE_MS', { DATABASE_KEEPALIVE_MS: '10' }],
    ['AUTH_LISTENER_HEARTBEAT_MS', { AUTH_LISTENER_HEARTBEAT_MS: '0' }],
    ['JWT_SECRET', { NODE_ENV: 'production' }],
    ['JWT_SECRET', { JWT_SECRET: 'short' }],
    ['PASSWORD_HASH_CONCURRENCY', { PASSWORD_HASH_CONCURRENCY: '0' }],
    ['AUTH_CACHE_TTL_MS', { AUTH_CACHE_TTL_MS: '-1' }],
    ['APP_URL', { APP_URL: 'ftp://app.example' }],
    ['SMTP_URL', { SMTP_URL: 'http://mail.example' }],
    ['CAPTCHA_ENABLED', { CAPTCHA_ENABLED: 'sometimes' }],
    ['CAPTCHA_VERIFY_URL', { CAPTCHA_VERIFY_URL: 'verify' }],
    ['AI_PROVIDER', { AI_PROVIDER: 'magic' }],
    ['AI_BASE_URL', { AI_BASE_URL: 'nowhere' }],
    ['AI_TIMEOUT_MS', { AI_TIMEOUT_MS: '-1' }],
    ['AI_LOCAL_THREADS', { AI_LOCAL_THREADS: '0' }],
    ['TELEGRAM_API_URL', { TELEGRAM_API_URL: 'telegram' }],
    ['WEBHOOK_ALLOW_PRIVATE', { WEBHOOK_ALLOW_PRIVATE: '2' }],
    ['REMINDER_HOURS_BEFORE_DUE', { REMINDER_HOURS_BEFORE_DUE: '24,,1' }],
    ['REMINDER_HOURS_BEFORE_DUE', { REMINDER_HOURS_BEFORE_DUE: '0' }],
    // Out of PostgreSQL's timestamp range once subtracted from a due time: every reminder run failed.
    ['REMINDER_HOURS_BEFORE_DUE', { REMINDER_HOURS_BEFORE_DUE: '24,100000000' }],
    ['SCHEDULER_CRON', { SCHEDULER_CRON: '* * * * *' }],
    // Six fields that the scheduler cannot read: the start failed with the cron library's message only.
    ['SCHEDULER_CRON', { SCHEDULER_CRON: '99 * * * * *' }],
    ['SCHEDULER_CRON', { SCHEDULER_CRON: 'a b c d e f' }],
    ['DELIVERY_POLL_INTERVAL_MS', { DELIVERY_POLL_INTERVAL_MS: '1.5' }],
    // Beyond a timer's 2^31 − 1 ms Node fires the interval every millisecond instead.
    ['DELIVERY_POLL_INTERVAL_MS', { DELIVERY_POLL_INTERVAL_MS: '3000000000' }],
    ['DELIVERY_RETRY_BASE_SECONDS', { DELIVERY_RETRY_BASE_SECONDS: 'soon' }],
    ['DELIVERY_MAX_ATTEMPTS', { DELIVERY_MAX_ATTEMPTS: '0' }],
    ['DELIVERY_RETENTION_DAYS', { DELIVERY_RETENTION_DAYS: '0' }],
    ['UPLOAD_MAX_BYTES', { UPLOAD_MAX_BYTES: '20MB' }],
    ['EXPORT_CONCURRENCY', { EXPORT_CONCURRENCY: '0' }],
    ['EXPORT_STALL_TIMEOUT_MS', { EXPORT_STALL_TIMEOUT_MS: '10' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
    // Origins a browser never sends, so they would silently allow nothing.
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://app.example/' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'app.example' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://a.example,' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://a.example, *' }],
    ['MAIL_FROM', { MAIL_FROM: 'Classroom Tasks' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'load-balancer' }],
    ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.0/33' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'loopback,' }],
    ['MAIL_FROM', { MAIL_FROM: 'Classroom Tasks <tasks>' }],
    ['LOGIN_LIMIT_PER_IP', { LOGIN_LIMIT_PER_IP: '0' }],
    ['ACCOUNT_ROUTE_LIMIT_PER_IP', { ACCOUNT_ROUTE_LIMIT_PER_IP: 'lots' }],
    ['HTTP_HEADERS_TIMEOUT_MS', { HTTP_HEADERS_TIMEOUT_MS: '50' }],
    // The request timeout covers the headers: a longer headers timeout could never fire.
    ['HTTP_HEADERS_TIMEOUT_MS', { HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_REQUEST_TIMEOUT_MS: '30000' }],
    ['HTTP_REQUEST_TIMEOUT_MS', { HTTP_REQUEST_TIMEOUT_MS: '1.5' }],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', { HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' }],
  ])('rejects a bad %s with one message naming it', (variable, env) => {
    const error = errorFor(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^Invalid configuration: ${variable} `));
    expect(error.message).not.toContain('\n');
  });
});

describe('documented variables', () => {
  /** Every variable name loadConfig reads for `env`. */
  function variablesRead(env: Record<string, string>): Set<string> {
    const read = new Set<string>();
    loadConfig(
      new Proxy(env, {
        get(target, name) {
          if (typeof name === 'string') read.add(name);
          return target[name as string];
        },
      }),
    );
    return read;
  }

  it('lists every variable the configuration reads in .env.example and docs/operations.md', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cts-config-'));
    try {
      const read = new Set([
        ...variablesRead({ DATA_DIR: dataDir }),
        // The variables read only when their feature is on.
        ...variablesRead({
          DATA_DIR: dataDir,
          AI_PROVIDER: 'openai',
          AI_BASE_URL: 'http://127.0.0.1:1/v1',
          AI_API_KEY: 'key',
          AI_MODEL: 'model',
          CAPTCHA_ENABLED: 'true',
          CAPTCHA_SECRET: 'secret',
          SMTP_URL: 'smtp://127.0.0.1:25',
          TELEGRAM_BOT_TOKEN: 'token',
        }),
      ]);
      const root = join(__dirname, '..', '..');
      const example = readFileSync(join(root, '.env.example'), 'utf8');
      const operations = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
      const listed = new Set([...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]));
      expect([...read].filter((name) => !listed.has(name))).toEqual([]);
      expect([...read].filter((name) => !operations.includes(`\`${name}\``))).toEqual([]);
      expect([...listed].filter((name) => !read.has(name))).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('.env.example', () => {
  // README: ".env.example lists every one with its default".
  const lines = readFileSync(join(__dirname, '../../.env.example'), 'utf8').split('\n');
  const defaults = Object.fromEntries(
    lines.map((line) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)).flatMap((m) => (m ? [[m[1], m[2]]] : [])),
  );
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cts-config-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('shows the defaults: its values configure what no variable does', () => {
    expect(loadConfig({ ...defaults, DATA_DIR: dataDir })).toEqual(loadConfig({ DATA_DIR: dataDir }));
  });
});
