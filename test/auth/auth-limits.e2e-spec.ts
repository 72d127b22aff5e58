import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { createApp } from '../../src/bootstrap';
import { CapturedMail } from '../fakes/smtp-server';
import {
  apiError,
  useAppWithMailCapture,
  freshIp,
  registerThroughMail,
  registrationToken,
  uniqueEmail,
} from '../utils/accounts';

const DAY_SECONDS = 24 * 60 * 60;

/** The per-address e-mail limit and login throttling, both held in PostgreSQL across instances. */
describe('auth: rate limits', () => {
  const { ctx, smtp } = useAppWithMailCapture();

  describe('5 e-mails per address per 24 hours', () => {
    const expectLimited = (res: request.Response) => {
      expect(res.status).toBe(429);
      expect(res.body).toEqual(apiError('RATE_LIMITED'));
      return Number(res.headers['retry-after']);
    };

    it('answers the 6th registration mail with 429 and Retry-After from the oldest send', async () => {
      const email = uniqueEmail();
      for (let i = 0; i < 5; i++) await registrationToken(ctx, smtp, email);
      const retryAfter = expectLimited(await ctx.http.post('/auth/register').send({ email }));
      expect(retryAfter).toBeGreaterThan(DAY_SECONDS - 60);
      expect(retryAfter).toBeLessThanOrEqual(DAY_SECONDS);
      await expect(smtp.waitFor(email, 300)).rejects.toThrow(/No mail/);

      await ctx.db.query(
        `UPDATE email_sends SET created_at = now() - interval '23 hours'
         WHERE id = (SELECT min(id) FROM email_sends WHERE address = $1)`,
        [email],
      );
      const later = expectLimited(await ctx.http.post('/auth/register').send({ email }));
      expect(later).toBeGreaterThan(3600 - 60);
      expect(later).toBeLessThanOrEqual(3600);

      await ctx.db.query(
        `UPDATE email_sends SET created_at = now() - interval '25 hours'
         WHERE id = (SELECT min(id) FROM email_sends WHERE address = $1)`,
        [email],
      );
      await ctx.http.post('/auth/register').send({ email }).expect(200);
    });

    it('serializes concurrent requests: exactly 5 of 8 concurrent registrations, resets and changes pass', async () => {
      const email = uniqueEmail('burst');
      const changers = [await registerThroughMail(ctx, smtp), await registerThroughMail(ctx, smtp)];
      const publicRoute = (path: string) => () =>
        ctx.http.post(path).set('X-Forwarded-For', freshIp()).send({ email });
      const requests = [
        ...Array.from({ length: 3 }, () => publicRoute('/auth/register')),
        ...Array.from({ length: 3 }, () => publicRoute('/auth/forgot-password')),
        ...changers.map(
          (changer) => () =>
            ctx.http.post('/users/me/email/change').set('Authorization', changer.auth).send({ email }),
        ),
      ];
      const results = await Promise.all(requests.map((send) => send()));
      expect(results.filter((res) => res.status === 200)).toHaveLength(5);
      expect(results.filter((res) => res.status === 429)).toHaveLength(3);
      const [row] = await ctx.db.query(`SELECT count(*)::int AS n FROM email_sends WHERE address = $1`, [
        email,
      ]);
      expect(row.n).toBe(5);
    });

    it('bounds the e-mail change mails of one account to 5 per 24 hours, whatever the addresses', async () => {
      const changer = await registerThroughMail(ctx, smtp);
      const changeTo = (email: string) =>
        ctx.http.post('/users/me/email/change').set('Authorization', changer.auth).send({ email });
      for (let i = 0; i < 5; i++) await changeTo(uniqueEmail(`spray${i}`)).expect(200);
      const refused = uniqueEmail('spray5');
      const retryAfter = expectLimited(await changeTo(refused));
      expect(retryAfter).toBeGreaterThan(DAY_SECONDS - 60);
      await expect(smtp.waitFor(refused, 300)).rejects.toThrow(/No mail/);
      const [row] = await ctx.db.query(`SELECT count(*)::int AS n FROM email_sends WHERE address = $1`, [
        refused,
      ]);
      expect(row.n).toBe(0);

      await ctx.db.query(
        `UPDATE auth_tokens SET created_at = now() - interval '25 hours'
          WHERE id = (SELECT id FROM auth_tokens WHERE user_id = $1 AND purpose = 'EMAIL_CHANGE'
                       ORDER BY created_at LIMIT 1)`,
        [changer.id],
      );
      await changeTo(refused).expect(200);
    });

    // Keep after every test of this file that uses a login token: passport's strategies are process-global, so
    // once the second application below is closed, the first one checks tokens with the closed one's strategy.
    it('counts register, forgot-password and e-mail change together, and holds across instances', async () => {
      const email = uniqueEmail('mixed');
      const changer = await registerThroughMail(ctx, smtp);
      const changeEmail = () =>
        ctx.http.post('/users/me/email/change').set('Authorization', changer.auth).send({ email });
      await ctx.http.post('/auth/register').send({ email }).expect(200);
      await ctx.http.post('/auth/forgot-password').send({ email }).expect(200);
      await changeEmail().expect(200);
      await ctx.http.post('/auth/forgot-password').send({ email }).expect(200);
      await ctx.http.post('/auth/register').send({ email }).expect(200);

      expectLimited(await ctx.http.post('/auth/forgot-password').send({ email }));
      expectLimited(await changeEmail());
      expectLimited(await ctx.http.post('/auth/register').send({ email: email.toUpperCase() }));

      const second = await createApp(ctx.config, ctx.databaseUrl);
      await second.init();
      try {
        expectLimited(await request(second.getHttpServer()).post('/auth/register').send({ email }));
      } finally {
        await second.close();
      }
      const mails: CapturedMail[] = [];
      for (let i = 0; i < 3; i++) mails.push(await smtp.waitFor(email));
      expect(mails.map((mail) => mail.subject)).toHaveLength(3);
    });
  });

  describe('login throttling', () => {
    let second: NestExpressApplication;
    let secondHttp: TestAgent;
    beforeAll(async () => {
      second = await createApp(ctx.config, ctx.databaseUrl);
      await second.init();
      secondHttp = request(second.getHttpServer());
    });
    afterAll(async () => second.close());

    it('allows 10 attempts per minute for one IP and e-mail, then 429 with Retry-After, on every instance', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const ip = freshIp();
      const attempt = (agent: TestAgent, email: string, password: string, from = ip) =>
        agent.post('/auth/login').set('X-Forwarded-For', from).send({ email, password });
      for (let i = 0; i < 10; i++) {
        await attempt(i % 2 ? ctx.http : secondHttp, user.email, 'wrong password').expect(401);
      }
      for (const agent of [ctx.http, secondHttp]) {
        const blocked = await attempt(agent, user.email.toUpperCase(), user.password);
        expect(blocked.status).toBe(429);
        expect(blocked.body).toEqual(apiError('RATE_LIMITED'));
        const retryAfter = Number(blocked.headers['retry-after']);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }
      // Other e-mails from the same IP and the same e-mail from another IP still get through.
      await attempt(ctx.http, uniqueEmail(), 'wrong password').expect(401);
      await attempt(ctx.http, user.email, user.password, freshIp()).expect(200);

      // When the block ends, a new window starts.
      await ctx.db.query(
        `UPDATE throttler_hits SET blocked_until = now() - interval '1 second', window_ends_at = now()`,
      );
      await attempt(ctx.http, user.email, user.password).expect(200);
    });

    it('limits every minute, not only the first: a window that ended without a block starts a new one', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const ip = freshIp();
      const attempt = () =>
        ctx.http
          .post('/auth/login')
          .set('X-Forwarded-For', ip)
          .send({ email: user.email, password: 'wrong' });
      await attempt().expect(401);
      // A minute later: the window has ended and the key was never blocked (blocked_until is null).
      await ctx.db.query(
        `UPDATE throttler_hits SET window_ends_at = now() - interval '1 second' WHERE blocked_until IS NULL`,
      );
      for (let i = 0; i < 10; i++) await attempt().expect(401);
      const blocked = await attempt();
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual(apiError('RATE_LIMITED'));
    });

    it('allows 10 current-password checks per minute for one account, from any IP, on every instance', async () => {
      const [user, other] = [await registerThroughMail(ctx, smtp), await registerThroughMail(ctx, smtp)];
      const change = (agent: TestAgent, who: typeof user, currentPassword: string) =>
        agent
          .patch('/users/me/password')
          .set('Authorization', who.auth)
          .set('X-Forwarded-For', freshIp())
          .send({ currentPassword, newPassword: 'another fine password' });
      for (let i = 0; i < 10; i++) {
        await change(i % 2 ? ctx.http : secondHttp, user, `guess number ${i}`).expect(401);
      }
      for (const agent of [ctx.http, secondHttp]) {
        const blocked = await change(agent, user, user.password);
        expect(blocked.status).toBe(429);
        expect(blocked.body).toEqual(apiError('RATE_LIMITED'));
        expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      await change(ctx.http, other, other.password).expect(200);
    });

    it('allows LOGIN_LIMIT_PER_IP attempts per minute for one IP across e-mails, malformed ones included', async () => {
      const ip = freshIp();
      const limit = ctx.config.accountLimits.loginPerIp;
      // Attempts count before validation, so bodies without a password (400, no bcrypt work) fill the window.
      const attempts = await Promise.all(
        Array.from({ length: limit }, () =>
          ctx.http.post('/auth/login').set('X-Forwarded-For', ip).send({ email: uniqueEmail() }),
        ),
      );
      expect(attempts.map((res) => res.status)).toEqual(Array(limit).fill(400));
      const blocked = await ctx.http
        .post('/auth/login')
        .set('X-Forwarded-For', ip)
        .send({ email: uniqueEmail(), password: 'wrong password' });
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual(apiError('RATE_LIMITED'));
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      await ctx.http
        .post('/auth/login')
        .set('X-Forwarded-For', freshIp())
        .send({ email: uniqueEmail(), password: 'wrong password' })
        .expect(401);
    });

    it('does not throttle routes outside the account routes', async () => {
      const ip = freshIp();
      const results = await Promise.all(
        Array.from({ length: 60 }, () => ctx.http.get('/health/live').set('X-Forwarded-For', ip)),
      );
      expect(results.every((res) => res.status === 200)).toBe(true);
    });
  });
});
