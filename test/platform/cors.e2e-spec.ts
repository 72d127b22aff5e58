import { useTestApp } from '../utils/test-app';
import { apiError } from '../utils/expect';

const ALLOWED = 'https://allowed.example';
const ONE_MIB = 1024 * 1024;

/**
 * A browser page shows an error only when its answer carries `Access-Control-Allow-Origin`: without it, the
 * page sees "Failed to fetch" instead of `{error, code}`. Every stage that can refuse a request is tried.
 */
describe('CORS on every answer', () => {
  const ctx = useTestApp({ CORS_ORIGINS: `${ALLOWED}, https://other.example` });

  const post = (headers: Record<string, string>, body: string | Buffer) =>
    ctx.http.post('/auth/login').set('Origin', ALLOWED).set(headers).send(body);

  it.each([
    ['malformed JSON', 400, 'VALIDATION_ERROR', {}, '{"email": "a@b.c",'],
    ['a JSON body over 1 MiB', 413, 'PAYLOAD_TOO_LARGE', {}, `{"p":"${'x'.repeat(ONE_MIB)}"}`],
    [
      'an unsupported charset',
      400,
      'VALIDATION_ERROR',
      { 'Content-Type': 'application/json; charset=latin1' },
      '{}',
    ],
    ['an unknown content encoding', 400, 'VALIDATION_ERROR', { 'Content-Encoding': 'br2' }, '{}'],
    ['a body that is not the gzip it claims', 400, 'VALIDATION_ERROR', { 'Content-Encoding': 'gzip' }, '{}'],
    ['a body that is not JSON', 400, 'VALIDATION_ERROR', { 'Content-Type': 'text/plain' }, '{}'],
    ['JSON nested too deep', 400, 'VALIDATION_ERROR', {}, `{"a":${'['.repeat(40)}${']'.repeat(40)}}`],
  ])('%s: %i %s with the CORS headers of the allowed origin', async (_case, status, code, headers, body) => {
    const res = await post({ 'Content-Type': 'application/json', ...headers }, body);
    expect([res.status, res.body]).toEqual([status, apiError(code)]);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('an unknown route and a refused login token carry them too', async () => {
    const missing = await ctx.http.get('/no/such/route').set('Origin', ALLOWED);
    expect(missing.status).toBe(404);
    expect(missing.headers['access-control-allow-origin']).toBe(ALLOWED);
    const refused = await ctx.http.get('/users/me').set('Origin', ALLOWED).set('Authorization', 'Bearer x');
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('an origin not allowed gets none, even on an early error', async () => {
    const res = await ctx.http
      .post('/auth/login')
      .set('Origin', 'https://evil.example')
      .set('Content-Type', 'application/json')
      .send('{"email":');
    expect(res.status).toBe(400);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('lets the browser keep a preflight for 7200 s (CORS_MAX_AGE_SECONDS)', async () => {
    const preflight = await ctx.http
      .options('/classes')
      .set('Origin', ALLOWED)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type,idempotency-key');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(preflight.headers['access-control-max-age']).toBe('7200');
  });
});
