import { AddressInfo, connect } from 'node:net';
import { JwtService } from '@nestjs/jwt';
import { Client } from 'pg';
import { createTestApp, TestApp, useTestApp } from '../utils/test-app';
import { createClassWithRoles, createTask } from '../utils/tasks';
import { createUser } from '../utils/users';

const ONE_MIB = 1024 * 1024;

/** A JSON object whose serialised size is exactly `bytes`. */
function jsonOfSize(bytes: number): string {
  const wrapper = '{"padding":""}';
  return `{"padding":"${'x'.repeat(bytes - wrapper.length)}"}`;
}

describe('platform', () => {
  const ctx = useTestApp();

  describe('health and documentation', () => {
    it('answers /health and /health/live', async () => {
      await ctx.http.get('/health').expect(200, { status: 'ok', storage: 'ok' });
      await ctx.http.get('/health/live').expect(200, { status: 'ok' });
    });

    it('serves the OpenAPI document, generated from the code', async () => {
      const res = await ctx.http.get('/openapi.json').expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.openapi).toMatch(/^3\./);
      expect(res.body.paths['/health'].get).toBeDefined();
      expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    });

    it('serves the OpenAPI UI at /docs', async () => {
      const res = await ctx.http.get('/docs').redirects(1).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('swagger-ui');
    });
  });

  describe('request ids', () => {
    it('echoes a sane X-Request-Id and generates one otherwise', async () => {
      const given = await ctx.http.get('/health/live').set('X-Request-Id', 'abc-123');
      expect(given.headers['x-request-id']).toBe('abc-123');
      const generated = await ctx.http.get('/health/live');
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const unsafe = await ctx.http.get('/health/live').set('X-Request-Id', 'bad id with spaces');
      expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it.each([
      ['headers over the limit', 'GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ' + 'a'.repeat(20_000), 431],
      ['a malformed request', 'GET /health/live HTTP/1.1\r\nHost: x\r\nNo colon here', 400],
    ])(
      'answers %s refused by the HTTP parser with {error, code} and X-Request-Id',
      async (_case, head, status) => {
        const server = ctx.app.getHttpServer();
        // supertest reuses a listening server.
        if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as AddressInfo;
        const raw = await new Promise<string>((resolve, reject) => {
          // After a first request answered on the same keep-alive connection.
          const first = 'GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n';
          const socket = connect(port, '127.0.0.1', () => socket.write(first));
          let received = '';
          socket.on('data', (chunk) => {
            if (!received) socket.write(`${head}\r\n\r\n`);
            received += chunk.toString();
          });
          socket.on('close', () => resolve(received));
          socket.on('error', reject);
        });
        expect(raw).toMatch(/^HTTP\/1.1 200 /);
        const [headers, body] = raw.slice(raw.lastIndexOf('HTTP/1.1 ')).split('\r\n\r\n');
        expect(headers).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(headers).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
        expect(JSON.parse(body)).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
      },
    );

    it('carries the caller X-Request-Id on 401, 413, the CSV export and its refusal', async () => {
      const roles = await createClassWithRoles(ctx);
      const task = await createTask(ctx, roles.classId, roles.owner);
      const withId = (id: string, req: import('supertest').Test) => req.set('X-Request-Id', id);
      const answers = await Promise.all([
        withId('rid-401', ctx.http.get('/users/me')),
        withId(
          'rid-413',
          ctx.http
            .post('/classes')
            .set('Content-Type', 'application/json')
            .send(jsonOfSize(ONE_MIB + 1)),
        ),
        withId(
          'rid-csv',
          ctx.http.get(`/tasks/${task.id}/submissions/export`).set('Authorization', roles.owner.auth),
        ),
        withId(
          'rid-403',
          ctx.http.get(`/tasks/${task.id}/submissions/export`).set('Authorization', roles.member.auth),
        ),
      ]);
      expect(answers.map((res) => [res.status, res.headers['x-request-id']])).toEqual([
        [401, 'rid-401'],
        [413, 'rid-413'],
        [200, 'rid-csv'],
        [403, 'rid-403'],
      ]);
    });

    it('carries X-Request-Id on error answers too', async () => {
      const res = await ctx.http.get('/no/such/route').set('X-Request-Id', 'req-404');
      expect(res.status).toBe(404);
      expect(res.headers['x-request-id']).toBe('req-404');
    });
  });

  describe('errors are exactly {error, code}', () => {
    it('answers unknown routes with 404 NOT_FOUND, with or without a token', async () => {
      const user = await createUser(ctx);
      const anonymous = await ctx.http.get('/no/such/route');
      expect(anonymous.status).toBe(404);
      expect(anonymous.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' });
      const res = await ctx.http.get('/no/such/route').set('Authorization', user.auth);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' });
      const post = await ctx.http.post('/no/such/route').send({});
      expect(post.status).toBe(404);
      expect(post.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' });
    });

    it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
      const res = await ctx.http
        .post('/auth/login')
        .set('Content-Type', 'application/json')
        .send('{"email": "a@b.c",');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
    });

    it('answers a JSON body over 1 MiB with 413 PAYLOAD_TOO_LARGE, and takes one of exactly 1 MiB', async () => {
      const tooLarge = await ctx.http
        .post('/no/such/route')
        .set('Content-Type', 'application/json')
        .send(jsonOfSize(ONE_MIB + 1));
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body).toEqual({ error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' });
      // At the limit the body is parsed and the request goes on to routing.
      const atLimit = await ctx.http
        .post('/no/such/route')
        .set('Content-Type', 'application/json')
        .send(jsonOfSize(ONE_MIB));
      expect(atLimit.status).toBe(404);
      expect(atLimit.body).toEqual({ error: expect.any(String), code: 'NOT_FOUND' });
    });

    it('answers JSON nested deeper than 32 levels with 400 VALIDATION_ERROR, not 500', async () => {
      /** An object holding arrays nested `depth - 1` deep. */
      const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
      const send = (body: string) =>
        ctx.http.post('/no/such/route').set('Content-Type', 'application/json').send(body);
      expect((await send(nested(32))).status).toBe(404);
      for (const depth of [33, 5000]) {
        const res = await send(nested(depth));
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
      }
      const deepLogin = await ctx.http
        .post('/auth/login')
        .set('Content-Type', 'application/json')
        .send(`{"email":${'['.repeat(5000)}${']'.repeat(5000)},"password":"x"}`);
      expect(deepLogin.status).toBe(400);
      expect(deepLogin.body).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
    });

    it.each([
      ['an unsupported charset', { 'Content-Type': 'application/json; charset=latin1' }, '{"email":"a@b.c"}'],
      ['an unknown content encoding', { 'Content-Encoding': 'foo' }, '{"email":"a@b.c"}'],
      ['a body that is not the gzip it claims', { 'Content-Encoding': 'gzip' }, '{"email":"a@b.c"}'],
    ])('answers a JSON body with %s with 400 VALIDATION_ERROR, not 500', async (_case, headers, body) => {
      const res = await ctx.http
        .post('/auth/login')
        .set({ 'Content-Type': 'application/json', ...headers })
        .set('X-Request-Id', 'req-body')
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
      expect(res.headers['x-request-id']).toBe('req-body');
    });

    it('answers a body that is not JSON with 400 VALIDATION_ERROR instead of ignoring it', async () => {
      const user = await createUser(ctx);
      const patch = (type: string) =>
        ctx.http
          .patch('/users/me')
          .set('Authorization', user.auth)
          .set('Content-Type', type)
          .send('{"nickname":"Renamed"}');
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/merge-patch+json',
      ]) {
        const res = await patch(type);
        expect([type, res.status, res.body]).toEqual([
          type,
          400,
          { error: expect.any(String), code: 'VALIDATION_ERROR' },
        ]);
      }
      const me = await ctx.http.get('/users/me').set('Authorization', user.auth).expect(200);
      expect(me.body.nickname).not.toBe('Renamed');
      // JSON with any parameter, and requests without a body, go through as before.
      await patch('Application/JSON; charset=utf-8').expect(200);
      await ctx.http.post(`/users/me/notifications/read-all`).set('Authorization', user.auth).expect(200);
    });

    it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__', 'prototype'])(
      'answers an unknown body or query field named %s with 400 VALIDATION_ERROR like any other',
      async (field) => {
        const user = await createUser(ctx);
        const body = await ctx.http
          .patch('/users/me')
          .set('Authorization', user.auth)
          .set('Content-Type', 'application/json')
          .send(`{"nickname":"Renamed","${field}":{"a":1}}`);
        expect([body.status, body.body]).toEqual([
          400,
          { error: expect.any(String), code: 'VALIDATION_ERROR' },
        ]);
        const query = await ctx.http
          .get(`/users/me/notifications?${field}=1`)
          .set('Authorization', user.auth);
        expect([query.status, query.body]).toEqual([
          400,
          { error: expect.any(String), code: 'VALIDATION_ERROR' },
        ]);
        const me = await ctx.http.get('/users/me').set('Authorization', user.auth).expect(200);
        expect(me.body.nickname).not.toBe('Renamed');
      },
    );

    it('never answers with a stack or framework details', async () => {
      const res = await ctx.http.post('/auth/login').set('Content-Type', 'application/json').send('{');
      expect(Object.keys(res.body).sort()).toEqual(['code', 'error']);
      expect(res.text).not.toMatch(/\bat \S+ \(|node_modules|SyntaxError/);
    });
  });

  describe('login tokens', () => {
    it('answers a well-signed token whose subject is not a user id with 401, not 500', async () => {
      const jwt = ctx.app.get(JwtService);
      for (const sub of ['not-a-uuid', 42, '']) {
        const token = await jwt.signAsync({ sub, ver: 0 });
        const res = await ctx.http.get('/users/me').set('Authorization', `Bearer ${token}`);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: expect.any(String), code: 'UNAUTHORIZED' });
      }
    });
  });

  describe('security headers and CORS', () => {
    it('sets helmet headers and hides the framework', async () => {
      const res = await ctx.http.get('/health/live');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it('allows any origin by default and exposes the headers clients read', async () => {
      const res = await ctx.http.get('/health/live').set('Origin', 'https://client.example');
      expect(res.headers['access-control-allow-origin']).toBe('https://client.example');
      expect(res.headers['access-control-expose-headers']).toBe(
        'X-Request-Id,Retry-After,Content-Disposition,ETag,Idempotent-Replayed',
      );
      const preflight = await ctx.http
        .options('/classes')
        .set('Origin', 'https://client.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://client.example');
      expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    });
  });
});

describe('platform with CORS_ORIGINS set and a database that goes away', () => {
  let ctx: TestApp;
  let admin: Client;
  let database: string;
  beforeAll(async () => {
    ctx = await createTestApp({ CORS_ORIGINS: 'https://allowed.example, https://other.example' });
    database = new URL(ctx.databaseUrl).pathname.slice(1);
    admin = new Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS true`);
    await admin.end();
    await ctx.close();
  });

  it('allows only the configured origins', async () => {
    const allowed = await ctx.http.get('/health/live').set('Origin', 'https://other.example');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://other.example');
    const denied = await ctx.http.get('/health/live').set('Origin', 'https://evil.example');
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers /health with 503 while the database refuses connections, and 200 once it is back', async () => {
    await ctx.http.get('/health').expect(200, { status: 'ok', storage: 'ok' });
    await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
      database,
    ]);

    const down = await ctx.http.get('/health');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
    // Liveness does not depend on the database.
    await ctx.http.get('/health/live').expect(200, { status: 'ok' });

    await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS true`);
    await ctx.http.get('/health').expect(200, { status: 'ok', storage: 'ok' });
  });

  it('answers a valid token with 5xx, not 401, while its user cannot be read', async () => {
    const user = await createUser(ctx);
    await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
      database,
    ]);
    try {
      // A 401 tells the client its token is bad, and it logs the user out over a database outage.
      // A terminated pooled connection counts as an outage (503); a refused new one is an unexpected error (500).
      const res = await ctx.http.get('/users/me').set('Authorization', user.auth);
      const expected = res.status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_ERROR';
      expect([500, 503]).toContain(res.status);
      expect(res.body).toEqual({ error: expect.any(String), code: expected });
    } finally {
      await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS true`);
    }
    await ctx.http.get('/users/me').set('Authorization', user.auth).expect(200);
  });
});

describe('platform with TRUST_PROXY=false', () => {
  const ctx = useTestApp({ TRUST_PROXY: 'false', LOGIN_LIMIT_PER_IP: '50' });

  it('takes the client IP from the connection, whatever X-Forwarded-For says', async () => {
    // Login attempts count per client IP (50 a minute) before validation; each claims another address.
    const login = (n: number) =>
      ctx.http
        .post('/auth/login')
        .set('X-Forwarded-For', `203.0.113.${n}`)
        .send({ email: `someone${n}@example.com` });
    const attempts = await Promise.all(Array.from({ length: 50 }, (_, n) => login(n)));
    expect(attempts.map((res) => res.status)).toEqual(Array(50).fill(400));
    const blocked = await login(50);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ error: expect.any(String), code: 'RATE_LIMITED' });
  });
});
