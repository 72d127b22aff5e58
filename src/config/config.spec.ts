import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { itRejects } from '../../test/utils/config';
import { Env, loadConfig } from './config';

describe('loadConfig', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cts-config-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const load = (env: Env = {}) => loadConfig({ DATA_DIR: dataDir, ...env });

  it('applies the documented defaults when the environment sets nothing', () => {
    const config = load();
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      appUrl: 'http://localhost:3000',
      publicUrl: 'http://localhost:3000',
      dataDir,
      corsOrigins: true,
      logLevel: 'info',
      database: { url: null, poolSize: 10, migrationsRun: true },
      jwt: { secret: null, expiresInSeconds: 604800 },
      passwordHashConcurrency: Math.max(1, availableParallelism() - 1),
      authCacheTtlMs: 60000,
      accountLimits: { loginPerIp: 200, routePerIp: 200 },
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
      uploads: { maxBytes: 20971520, quotaBytesPerUser: 1073741824 },
      fileStorage: { driver: 'local' },
      signedFileUrls: { ttlSeconds: 300 },
      http: { headersTimeoutMs: 20000, requestTimeoutMs: 300000, keepAliveTimeoutMs: 5000 },
      exports: { concurrency: 2, stallTimeoutMs: 60000 },
    });
  });

  it('changes nothing on disk: no DATA_DIR, no development secret', () => {
    const missing = join(dataDir, 'missing');
    expect(load().jwt.secret).toBeNull();
    expect(loadConfig({ DATA_DIR: missing }).dataDir).toBe(missing);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('reads every variable', () => {
    const config = load({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/app',
      DATABASE_POOL_SIZE: '3',
      DATABASE_DIRECT_URL: 'postgres://u:p@db-direct:5432/app',
      DATABASE_POOLER: 'transaction',
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
      LOGIN_LIMIT_PER_IP: '7',
      ACCOUNT_ROUTE_LIMIT_PER_IP: '8',
      APP_URL: 'https://app.example/',
      PUBLIC_URL: 'https://api.example/',
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
      FILE_URL_TTL_SECONDS: '60',
      EXPORT_CONCURRENCY: '4',
      EXPORT_STALL_TIMEOUT_MS: '500',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 8080,
      appUrl: 'https://app.example',
      publicUrl: 'https://api.example',
      corsOrigins: ['https://a.example', 'https://b.example'],
      logLevel: 'warn',
      database: {
        url: 'postgres://u:p@db:5432/app',
        directUrl: 'postgres://u:p@db-direct:5432/app',
        pooler: 'transaction',
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
      accountLimits: { loginPerIp: 7, routePerIp: 8 },
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
      uploads: { maxBytes: 1024, quotaBytesPerUser: 1073741824 },
      fileStorage: { driver: 'local' },
      http: { headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000 },
      exports: { concurrency: 4, stallTimeoutMs: 500 },
    });
  });

  // One case per area: each area's own spec checks the rest; this shows loadConfig lets its errors through.
  itRejects(load, [
    ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
    ['PORT', { PORT: 'eighty' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/app' }],
    ['JWT_SECRET', { NODE_ENV: 'production' }],
    ['MAIL_FROM', { MAIL_FROM: 'Classroom Tasks' }],
    ['AI_PROVIDER', { AI_PROVIDER: 'magic' }],
    ['SCHEDULER_CRON', { SCHEDULER_CRON: '* * * * *' }],
    ['UPLOAD_MAX_BYTES', { UPLOAD_MAX_BYTES: '20MB' }],
    ['EXPORT_CONCURRENCY', { EXPORT_CONCURRENCY: '0' }],
  ]);
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
          FILE_STORAGE: 's3',
          S3_BUCKET: 'files',
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

  it('leaves PUBLIC_URL unset, so that a copy with another PORT links to that port', () => {
    expect(loadConfig({ ...defaults, PORT: '8080', DATA_DIR: dataDir }).publicUrl).toBe(
      'http://localhost:8080',
    );
  });
});
