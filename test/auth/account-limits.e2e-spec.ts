import request from 'supertest';
import { SmtpCapture } from '../fakes/smtp-server';
import { apiError, MAIL_LINK, startAppWithMailCapture, tokenFromMail, uniqueEmail } from '../utils/accounts';
import { TestApp } from '../utils/test-app';

/** Every student of the class comes from the school's one address (X-Forwarded-For is trusted from loopback). */
const SCHOOL_IP = '203.0.113.40';
const CLASS_SIZE = 40;
const PASSWORD = 'a fine password';

const expectLimited = (res: request.Response): void => {
  expect(res.status).toBe(429);
  expect(res.body).toEqual(apiError('RATE_LIMITED'));
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
};

/** The per-IP limits of the account routes, at their defaults and configured. */
describe('auth: per-IP limits of the account routes', () => {
  describe('defaults', () => {
    let ctx: TestApp;
    let smtp: SmtpCapture;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ ctx, smtp, close } = await startAppWithMailCapture({ PASSWORD_HASH_CONCURRENCY: '2' }));
    });
    afterAll(() => close());

    const fromSchool = (test: request.Test) => test.set('X-Forwarded-For', SCHOOL_IP);
    const login = (email: string, password: string) =>
      fromSchool(ctx.http.post('/auth/login')).send({ email, password });
    /** Each step taken by the whole class at once, as told by the teacher; the statuses of each step. */
    const everyone = async <T>(items: T[], step: (item: T) => Promise<request.Response>) =>
      (await Promise.all(items.map(step))).map((res) => res.status);

    it('lets a class of 40 behind one address register and log in at once, a typo each included', async () => {
      const started = Date.now();
      const emails = Array.from({ length: CLASS_SIZE }, (_, n) => uniqueEmail(`student${n}`));
      const statuses = [
        await everyone(emails, (email) => fromSchool(ctx.http.post('/auth/register')).send({ email })),
      ];
      const tokens = await Promise.all(
        emails.map(async (email) =>
          tokenFromMail(ctx, await smtp.waitFor(email, 30_000), MAIL_LINK.registration),
        ),
      );
      statuses.push(
        await everyone(tokens, (token) =>
          fromSchool(ctx.http.get('/auth/verify-token').query({ token, purpose: 'REGISTRATION' })),
        ),
        await everyone(tokens, (token) =>
          fromSchool(ctx.http.post('/auth/register/complete')).send({ token, password: PASSWORD }),
        ),
        await everyone(emails, (email) => login(email, 'a fine pasword')),
        await everyone(emails, (email) => login(email, PASSWORD)),
      );
      const seconds = (Date.now() - started) / 1000;
      expect(statuses).toEqual([200, 200, 201, 401, 200].map((status) => Array(CLASS_SIZE).fill(status)));
      // Each per-IP counter took its route's requests in one window (logins, then register, verify-token
      // and complete); the per-address ones hold 2 each.
      const counts: { hits: number }[] = await ctx.db.query(
        `SELECT hits FROM throttler_hits ORDER BY hits DESC LIMIT 5`,
      );
      expect(counts.map((row) => row.hits)).toEqual([80, 40, 40, 40, 2]);
      process.stdout.write(`${CLASS_SIZE}-student burst: ${seconds.toFixed(1)} s\n`);
    }, 120_000);

    it('still bounds password guessing for one account from that address to 10 a minute', async () => {
      const email = uniqueEmail('guessed');
      for (let i = 0; i < 10; i++) await login(email, `guess ${i}`).expect(401);
      expectLimited(await login(email, 'guess 10'));
      // The class logs in meanwhile.
      await login(uniqueEmail('other'), 'wrong password').expect(401);
    });
  });

  describe('configured', () => {
    let ctx: TestApp;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ ctx, close } = await startAppWithMailCapture({
        LOGIN_LIMIT_PER_IP: '3',
        ACCOUNT_ROUTE_LIMIT_PER_IP: '2',
      }));
    });
    afterAll(() => close());

    const post = (path: string, ip: string, body: object) =>
      ctx.http.post(path).set('X-Forwarded-For', ip).send(body);

    it('answers the request past ACCOUNT_ROUTE_LIMIT_PER_IP with 429, each route counted on its own', async () => {
      const ip = '203.0.113.41';
      for (let i = 0; i < 2; i++) await post('/auth/register', ip, { email: uniqueEmail() }).expect(200);
      expectLimited(await post('/auth/register', ip, { email: uniqueEmail() }));
      await post('/auth/forgot-password', ip, { email: uniqueEmail() }).expect(200);
      await post('/auth/register', '203.0.113.42', { email: uniqueEmail() }).expect(200);
    });

    it('answers the login past LOGIN_LIMIT_PER_IP with 429, whatever the e-mail', async () => {
      const ip = '203.0.113.43';
      const attempt = (from: string) =>
        post('/auth/login', from, { email: uniqueEmail(), password: 'wrong password' });
      for (let i = 0; i < 3; i++) await attempt(ip).expect(401);
      expectLimited(await attempt(ip));
      await attempt('203.0.113.44').expect(401);
    });
  });
});
