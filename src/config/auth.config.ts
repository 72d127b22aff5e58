import { availableParallelism } from 'node:os';
import { bool, ConfigError, Env, int, optional, url } from './env';

/**
 * Authentication and the public account routes.
 * - `JWT_SECRET` (required when `NODE_ENV=production`, else generated once into `DATA_DIR/jwt-secret` by
 *   `prepareDataDir`): at least 32 characters.
 * - `PASSWORD_HASH_CONCURRENCY` (CPUs − 1, at least 1), `AUTH_CACHE_TTL_MS` (`60000`),
 *   `AUTH_LISTENER_HEARTBEAT_MS` (`1000`).
 * - `LOGIN_LIMIT_PER_IP`, `ACCOUNT_ROUTE_LIMIT_PER_IP` (`200` each).
 * - `CAPTCHA_ENABLED` (`false`), `CAPTCHA_SECRET` (unset), `CAPTCHA_VERIFY_URL` (Cloudflare Turnstile).
 */
export interface AuthConfig {
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
  captcha: { enabled: boolean; secret: string | null; verifyUrl: string };
}

/** As read from the environment: a null secret is the development one, kept in DATA_DIR. */
export type LoadedAuthConfig = Omit<AuthConfig, 'jwt'> & {
  jwt: { secret: string | null; expiresInSeconds: number };
};

export const JWT_SECRET_MIN_LENGTH = 32;

export function authConfig(env: Env, nodeEnv: string): LoadedAuthConfig {
  const secret = optional(env, 'JWT_SECRET');
  if (secret === null && nodeEnv === 'production') {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  }
  if (secret !== null && secret.length < JWT_SECRET_MIN_LENGTH) {
    throw new ConfigError('JWT_SECRET', `must be at least ${JWT_SECRET_MIN_LENGTH} characters`);
  }
  return {
    jwt: { secret, expiresInSeconds: 7 * 24 * 60 * 60 },
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
    authListenerHeartbeatMs: int(env, 'AUTH_LISTENER_HEARTBEAT_MS', 1_000, 100, 600_000),
    captcha: {
      enabled: bool(env, 'CAPTCHA_ENABLED', false),
      secret: optional(env, 'CAPTCHA_SECRET'),
      verifyUrl: url(env, 'CAPTCHA_VERIFY_URL', 'https://challenges.cloudflare.com/turnstile/v0/siteverify', [
        'http:',
        'https:',
      ]),
    },
  };
}
