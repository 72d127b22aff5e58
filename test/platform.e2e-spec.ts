import { createTestApp, TestApp } from './utils/test-app';
import { createUser } from './utils/users';

describe('platform', () => {
  let ctx: TestApp;
  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(async () => ctx.close());

  it('answers /health and /health/live', async () => {
    await ctx.http.get('/health').expect(200, { status: 'ok' });
    await ctx.http.get('/health/live').expect(200, { status: 'ok' });
  });

  it('echoes or generates X-Request-Id', async () => {
    const given = await ctx.http.get('/health/live').set('X-Request-Id', 'abc-123');
    expect(given.headers['x-request-id']).toBe('abc-123');
    const generated = await ctx.http.get('/health/live');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with 404 NOT_FOUND, with or without a token', async () => {
    const user = await createUser(ctx);
    expect((await ctx.http.get('/no/such/route')).status).toBe(404);
    const res = await ctx.http.get('/no/such/route').set('Authorization', user.auth);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' });
  });

  it('serves the OpenAPI document', async () => {
    const res = await ctx.http.get('/openapi.json').expect(200);
    expect(res.body.openapi).toMatch(/^3\./);
  });
});
