import { itRejects } from '../../test/utils/config';
import { Env } from './env';
import { authConfig } from './auth.config';

describe('authConfig', () => {
  const read = (env: Env) => authConfig(env, env.NODE_ENV ?? 'development');

  it('leaves the secret to the start step outside production when JWT_SECRET is unset', () => {
    expect(read({}).jwt).toEqual({ secret: null, expiresInSeconds: 604800 });
    expect(read({ JWT_SECRET: 'x'.repeat(32), NODE_ENV: 'production' }).jwt.secret).toBe('x'.repeat(32));
  });

  it('starts with CAPTCHA enabled but no secret (answered later with 503 CAPTCHA_UNAVAILABLE)', () => {
    expect(read({ CAPTCHA_ENABLED: 'true' }).captcha).toMatchObject({ enabled: true, secret: null });
  });

  itRejects(read, [
    ['JWT_SECRET', { NODE_ENV: 'production' }],
    ['JWT_SECRET', { JWT_SECRET: 'short' }],
    ['PASSWORD_HASH_CONCURRENCY', { PASSWORD_HASH_CONCURRENCY: '0' }],
    ['AUTH_CACHE_TTL_MS', { AUTH_CACHE_TTL_MS: '-1' }],
    ['AUTH_LISTENER_HEARTBEAT_MS', { AUTH_LISTENER_HEARTBEAT_MS: '0' }],
    ['LOGIN_LIMIT_PER_IP', { LOGIN_LIMIT_PER_IP: '0' }],
    ['ACCOUNT_ROUTE_LIMIT_PER_IP', { ACCOUNT_ROUTE_LIMIT_PER_IP: 'many' }],
    ['CAPTCHA_ENABLED', { CAPTCHA_ENABLED: 'sometimes' }],
    ['CAPTCHA_VERIFY_URL', { CAPTCHA_VERIFY_URL: 'verify' }],
  ]);
});
