import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { validateCronExpression } from 'cron';

/**
 * The whole configuration of the service, read once from the environment and validated.
 * Every area reads its own typed slice; nothing else reads `process.env`.
 */
export interface AppConfig {
  nodeEnv: string;
  port: number;
  appUrl: string;
  dataDir: string;
  corsOrigins: string[] | true;
  /** Express's `trust proxy`: which peers' `X-Forwarded-For` names the client IP (per-IP limits). */
  trustProxy: boolean | number | string[];
  logLevel: string;
  database: {
    /** null: start the embedded PostgreSQL under `dataDir`. */
    url: string | null;
    poolSize: number;
    migrationsRun: boolean;
    /** Opening a connection, or waiting for a free one of the pool, fails after this long. */
    connectTimeoutMs: number;
    /** PostgreSQL cancels a statement after this long; the client gives up on its answer a little later. */
    queryTimeoutMs: number;
    /** PostgreSQL ends a session whose transaction stays idle this long. */
    idleInTransactionTimeoutMs: number;
    /** The pool closes a connection unused this long. */
    idleTimeoutMs: number;
    /** TCP keepalive probes start after this much silence on a connection. */
    keepAliveMs: number;
  };
  jwt: { secret: string; expiresInSeconds: number };
  /** bcrypt hashes computed at once by this instance; more wait for a free slot. */
  passwordHashConcurrency: number;
  /** Lifetime of a cached token user (a safety net; changes invalidate at once); 0 turns the cache off. */
  authCacheTtlMs: number;
  /**
   * Per client IP and minute, each route counted on its own: login attempts, and requests to each other
   * public account route (register, verify-token, complete, forgot and reset password).
   */
  accountLimits: { loginPerIp: number; routePerIp: number };
  /** How often the token-user cache's listener proves its connection alive; a beat unanswered this long fails. */
  authListenerHeartbeatMs: number;
  mail: { smtpUrl: string | null; from: string };
  captcha: { enabled: boolean; secret: string | null; verifyUrl: string };
  ai: {
    provider: 'local' | 'openai';
    baseUrl: string;
    apiKey: string | null;
    model: string;
    timeoutMs: number;
    /** Worker threads of the local parser, each parsing one text at a time. */
    localThreads: number;
  };
  telegram: { botToken: string | null; apiUrl: string };
  webhook: { allowPrivate: boolean; timeoutMs: number };
  notifications: {
    reminderHoursBeforeDue: number[];
    schedulerCron: string;
    pollIntervalMs: number;
    retryBaseSeconds: number;
    maxAttempts: number;
    /** Days a sent or failed delivery is kept (a sent account e-mail goes at once). */
    retentionDays: number;
  };
  uploads: { maxBytes: number };
  /**
   * Node's HTTP server limits for slow clients: all request headers within `headersTimeoutMs`, the whole
   * request (headers and body) within `requestTimeoutMs`; an idle keep-alive connection closes after
   * `keepAliveTimeoutMs`.
   */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  /**
   * CSV exports: how many stream at once per instance (each holds a connection of a pool of their own, more
   * wait for one), and how long an export may deliver nothing before it is cut.
   */
  exports: { concurrency: number; stallTimeoutMs: number };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
  }
}

type Env = Record<string, string | undefined>;

/** `tasks@example.org` or `Classroom Tasks <tasks@example.org>`. */
const MAIL_FROM_PATTERN = /^(?:[^<>@]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/;

/** The longest delay Node's timers take; beyond it they fire after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function optional(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === '' ? null : value;
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const normalized = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalized)) return true;
  if (['false', '0', 'no', 'off'].includes(normalized)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = optional(env, name) ?? fallback;
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** One year. */
const MAX_REMINDER_HOURS = 8760;
/** `*` (any origin), or a comma-separated list of origins exactly as browsers send them. */
function corsOrigins(env: Env): string[] | true {
  const raw = str(env, 'CORS_ORIGINS', '*').trim();
  if (raw === '*') return true;
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    // An Origin header has no path, not even `/`: any other spelling would match no request.
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must be * or comma-separated origins such as https://app.example.org, got "${origin}"`,
      );
    }
    return origin;
  });
}

const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_PRESETS.includes(entry)) return true;
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** `true`, `false`, a number of proxy hops, or addresses, CIDR ranges and presets (Express's own forms). */
function trustProxy(env: Env): boolean | number | string[] {
  const raw = str(env, 'TRUST_PROXY', 'loopback').trim();
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  const invalid = entries.find((entry) => !isProxyAddress(entry));
  if (invalid !== undefined) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be true, false, a number of hops, or addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${invalid}"`,
    );
  }
  return entries;
}

function reminderHours(env: Env): number[] {
  const raw = str(env, 'REMINDER_HOURS_BEFORE_DUE', '24');
  const parts = raw.split(',').map((part) => part.trim());
  const hours = parts.map(Number);
  // The bound keeps `dueAt − h` within PostgreSQL's timestamps; a reminder a year ahead is already unusual.
  if (
    parts.some((part) => part === '') ||
    hours.some((h) => !Number.isFinite(h) || h <= 0 || h > MAX_REMINDER_HOURS)
  ) {
    throw new ConfigError(
      'REMINDER_HOURS_BEFORE_DUE',
      `must be comma-separated hours above 0 and at most ${MAX_REMINDER_HOURS}, got "${raw}"`,
    );
  }
  return [...new Set(hours)].sort((a, b) => b - a);
}

function cron(env: Env): string {
  const value = str(env, 'SCHEDULER_CRON', '0 * * * * *').trim();
  if (value.split(/\s+/).length !== 6 || !validateCronExpression(value).valid) {
    throw new ConfigError('SCHEDULER_CRON', `must be a 6-field cron expression, got "${value}"`);
  }
  return value;
}

/**
 * DATA_DIR, created when missing, must take files (uploads, the development secret, the embedded database):
 * found out at the first upload instead, every upload would fail with 500.
 */
function writableDataDir(env: Env): string {
  const dataDir = resolve(str(env, 'DATA_DIR', './data'));
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError('DATA_DIR', `must be a writable directory, got "${dataDir}" (${reason})`);
  }
  return dataDir;
}

const JWT_SECRET_MIN_LENGTH = 32;

/** Development secret: generated once and kept in DATA_DIR so tokens survive a restart. */
function devJwtSecret(dataDir: string): string {
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    // The bound of JWT_SECRET: a short or emptied file would sign every login token with a guessable key.
    if (kept.length < JWT_SECRET_MIN_LENGTH) {
      throw new ConfigError(
        'JWT_SECRET',
        `is unset and ${file} holds fewer than ${JWT_SECRET_MIN_LENGTH} characters (delete it to generate a new one)`,
      );
    }
    return kept;
  }
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** The request timeout covers the headers too, so a longer headers timeout could never fire. */
function httpTimeouts(env: Env): AppConfig['http'] {
  const headersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 20_000, 100, MAX_TIMER_MS);
  const requestTimeoutMs = int(env, 'HTTP_REQUEST_TIMEOUT_MS', 300_000, 100, MAX_TIMER_MS);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not be above HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`,
    );
  }
  const keepAliveTimeoutMs = int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1, MAX_TIMER_MS);
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs };
}

export function loadConfig(env: Env = process.env): AppConfig {
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  const dataDir = writableDataDir(env);
  const jwtSecret = optional(env, 'JWT_SECRET');
  if (jwtSecret === null && nodeEnv === 'production') {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  }
  if (jwtSecret !== null && jwtSecret.length < JWT_SECRET_MIN_LENGTH) {
    throw new ConfigError('JWT_SECRET', `must be at least ${JWT_SECRET_MIN_LENGTH} characters`);
  }
  const aiProvider = str(env, 'AI_PROVIDER', 'local');
  if (aiProvider !== 'local' && aiProvider !== 'openai') {
    throw new ConfigError('AI_PROVIDER', `must be "local" or "openai", got "${aiProvider}"`);
  }
  const databaseUrl = url(env, 'DATABASE_URL', null, ['postgres:', 'postgresql:']);
  const mailFrom = str(env, 'MAIL_FROM', 'Classroom Tasks <no-reply@localhost>').trim();
  // Without an address nodemailer sends from the null sender `<>`, which servers take for a bounce.
  if (!MAIL_FROM_PATTERN.test(mailFrom)) {
    throw new ConfigError('MAIL_FROM', `must be an address or "Name <address>", got "${mailFrom}"`);
  }
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent`);
  }

  return {
    nodeEnv,
    port: int(env, 'PORT', 3000, 0, 65535),
    appUrl: url(env, 'APP_URL', 'http://localhost:3000', ['http:', 'https:'])!,
    dataDir,
    corsOrigins: corsOrigins(env),
    trustProxy: trustProxy(env),
    logLevel,
    database: {
      url: databaseUrl,
      poolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 500),
      migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
      connectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
      queryTimeoutMs: int(env, 'DATABASE_QUERY_TIMEOUT_MS', 30_000, 100, 3_600_000),
      idleInTransactionTimeoutMs: int(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, 100, 3_600_000),
      idleTimeoutMs: int(env, 'DATABASE_IDLE_TIMEOUT_MS', 10_000, 100, 3_600_000),
      keepAliveMs: int(env, 'DATABASE_KEEPALIVE_MS', 10_000, 1_000, 3_600_000),
    },
    jwt: { secret: jwtSecret ?? devJwtSecret(dataDir), expiresInSeconds: 7 * 24 * 60 * 60 },
    // One CPU stays for the event loop and the database whatever the rate of logins.
    passwordHashConcurrency: int(
      env,
      'PASSWORD_HASH_CONCURRENCY',
      Math.max(1, availableParallelism() - 1),
      1,
      64,
    ),
    authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 60_000, 0, 3_600_000),
    // A class of 40 behind one school address registers and logs in within a minute, with room for typos.
    accountLimits: {
      loginPerIp: int(env, 'LOGIN_LIMIT_PER_IP', 200, 1, 1_000_000),
      routePerIp: int(env, 'ACCOUNT_ROUTE_LIMIT_PER_IP', 200, 1, 1_000_000),
    },
    authListenerHeartbeatMs: int(env, 'AUTH_LISTENER_HEARTBEAT_MS', 5_000, 100, 600_000),
    mail: { smtpUrl: url(env, 'SMTP_URL', null, ['smtp:', 'smtps:']), from: mailFrom },
    captcha: {
      enabled: bool(env, 'CAPTCHA_ENABLED', false),
      secret: optional(env, 'CAPTCHA_SECRET'),
      verifyUrl: url(env, 'CAPTCHA_VERIFY_URL', 'https://challenges.cloudflare.com/turnstile/v0/siteverify', [
        'http:',
        'https:',
      ])!,
    },
    ai: {
      provider: aiProvider,
      baseUrl: url(env, 'AI_BASE_URL', 'https://api.openai.com/v1', ['http:', 'https:'])!,
      apiKey: optional(env, 'AI_API_KEY'),
      model: str(env, 'AI_MODEL', 'gpt-4o-mini'),
      timeoutMs: int(env, 'AI_TIMEOUT_MS', 20000, 1, 600000),
      localThreads: int(env, 'AI_LOCAL_THREADS', 1, 1, 64),
    },
    telegram: {
      botToken: optional(env, 'TELEGRAM_BOT_TOKEN'),
      apiUrl: url(env, 'TELEGRAM_API_URL', 'https://api.telegram.org', ['http:', 'https:'])!,
    },
    webhook: { allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false), timeoutMs: 10000 },
    notifications: {
      reminderHoursBeforeDue: reminderHours(env),
      schedulerCron: cron(env),
      pollIntervalMs: int(env, 'DELIVERY_POLL_INTERVAL_MS', 1000, 10, MAX_TIMER_MS),
      retryBaseSeconds: int(env, 'DELIVERY_RETRY_BASE_SECONDS', 30, 0),
      maxAttempts: int(env, 'DELIVERY_MAX_ATTEMPTS', 6, 1, 100),
      retentionDays: int(env, 'DELIVERY_RETENTION_DAYS', 30, 1, 3650),
    },
    uploads: { maxBytes: int(env, 'UPLOAD_MAX_BYTES', 20 * 1024 * 1024, 1) },
    http: httpTimeouts(env),
    exports: {
      concurrency: int(env, 'EXPORT_CONCURRENCY', 2, 1, 100),
      stallTimeoutMs: int(env, 'EXPORT_STALL_TIMEOUT_MS', 60_000, 100, 3_600_000),
    },
  };
}
