import { CAPTCHA_TOKENS, CaptchaVerifier, startCaptchaVerifier } from '../fakes/captcha-server';
import { apiError, freshIp, uniqueEmail } from '../utils/accounts';
import { createTestApp, TestApp } from '../utils/test-app';
import { createUser, TestUser } from '../utils/users';

/** CAPTCHA on POST /auth/register and POST /users/me/email/change, against a real local verifier. */
describe('auth: CAPTCHA', () => {
  let verifier: CaptchaVerifier;
  let ctx: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    verifier = await startCaptchaVerifier();
    ctx = await createTestApp({
      CAPTCHA_ENABLED: 'true',
      CAPTCHA_SECRET: 'verifier-secret',
      CAPTCHA_VERIFY_URL: verifier.url,
    });
    user = await createUser(ctx);
  });
  afterAll(async () => {
    await ctx.close();
    await verifier.close();
  });

  /** Both protected routes, called with the given CAPTCHA token (or none). */
  const routes: [string, (app: TestApp, captchaToken?: string, ip?: string) => import('supertest').Test][] = [
    [
      'POST /auth/register',
      (app, captchaToken, ip = freshIp()) =>
        app.http
          .post('/auth/register')
          .set('X-Forwarded-For', ip)
          .send({ email: uniqueEmail(), captchaToken }),
    ],
    [
      'POST /users/me/email/change',
      (app, captchaToken, ip = freshIp()) =>
        app.http
          .post('/users/me/email/change')
          .set('X-Forwarded-For', ip)
          .set('Authorization', user.auth)
          .send({ email: uniqueEmail(), captchaToken }),
    ],
  ];

  describe.each(routes)('%s', (_route, call) => {
    it('passes with a token the verifier accepts, sending secret, response and remoteip as a form', async () => {
      const ip = freshIp();
      const before = verifier.requests.length;
      const res = await call(ctx, CAPTCHA_TOKENS.pass, ip);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      expect(verifier.requests.slice(before)).toEqual([
        {
          contentType: expect.stringMatching(/^application\/x-www-form-urlencoded/),
          form: { secret: 'verifier-secret', response: CAPTCHA_TOKENS.pass, remoteip: ip },
        },
      ]);
    });

    it.each([undefined, ''])('answers 400 CAPTCHA_REQUIRED without a token (%p)', async (captchaToken) => {
      const before = verifier.requests.length;
      const res = await call(ctx, captchaToken);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('CAPTCHA_REQUIRED'));
      expect(verifier.requests.length).toBe(before);
    });

    it('answers 403 CAPTCHA_FAILED when the verifier says no, and sends nothing', async () => {
      const sendsBefore = await ctx.db.query(`SELECT count(*)::int AS n FROM email_sends`);
      const res = await call(ctx, CAPTCHA_TOKENS.fail);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(apiError('CAPTCHA_FAILED'));
      expect(await ctx.db.query(`SELECT count(*)::int AS n FROM email_sends`)).toEqual(sendsBefore);
    });

    it.each([
      ['answers 500', CAPTCHA_TOKENS.error],
      ['answers something that is not JSON', CAPTCHA_TOKENS.garbage],
      ['answers JSON without a verdict', CAPTCHA_TOKENS.noVerdict],
    ])('answers 503 CAPTCHA_UNAVAILABLE when the verifier %s', async (_case, token) => {
      const res = await call(ctx, token);
      expect(res.status).toBe(503);
      expect(res.body).toEqual(apiError('CAPTCHA_UNAVAILABLE'));
    });
  });

  it('answers 503 CAPTCHA_UNAVAILABLE when the verifier does not answer within 5 seconds', async () => {
    const started = Date.now();
    const res = await routes[0][1](ctx, CAPTCHA_TOKENS.slow);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(apiError('CAPTCHA_UNAVAILABLE'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
    expect(Date.now() - started).toBeLessThan(6500);
  });

  it('answers 401 before looking at the CAPTCHA when the e-mail change has no login token', async () => {
    const res = await ctx.http.post('/users/me/email/change').send({ email: uniqueEmail() });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(apiError('UNAUTHORIZED'));
  });

  describe.each([
    ['no CAPTCHA_SECRET is configured', { CAPTCHA_ENABLED: 'true' }],
    [
      'the verifier is unreachable',
      { CAPTCHA_ENABLED: 'true', CAPTCHA_SECRET: 's', CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/' },
    ],
  ])('when %s', (_case, env) => {
    let misconfigured: TestApp;
    let member: TestUser;
    beforeAll(async () => {
      misconfigured = await createTestApp(env);
      member = await createUser(misconfigured);
    });
    afterAll(async () => misconfigured.close());

    it('answers 503 CAPTCHA_UNAVAILABLE on both routes, and 400 CAPTCHA_REQUIRED without a token', async () => {
      const register = await misconfigured.http
        .post('/auth/register')
        .send({ email: uniqueEmail(), captchaToken: CAPTCHA_TOKENS.pass });
      const change = await misconfigured.http
        .post('/users/me/email/change')
        .set('Authorization', member.auth)
        .send({ email: uniqueEmail(), captchaToken: CAPTCHA_TOKENS.pass });
      for (const res of [register, change]) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual(apiError('CAPTCHA_UNAVAILABLE'));
      }
      const missing = await misconfigured.http.post('/auth/register').send({ email: uniqueEmail() });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual(apiError('CAPTCHA_REQUIRED'));
    });
  });

  it('ignores captchaToken while CAPTCHA is disabled', async () => {
    const plain = await createTestApp();
    try {
      const res = await plain.http
        .post('/auth/register')
        .send({ email: uniqueEmail(), captchaToken: 'anything' });
      expect(res.status).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
