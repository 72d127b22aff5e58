import {
  apiError,
  useAppWithMailCapture,
  decodeJwt,
  duringNextPasswordCheck,
  freshIp,
  registerThroughMail,
  registrationToken,
  resetToken,
  tokenFromMail,
  MAIL_LINK,
  tokenHash,
  uniqueEmail,
  userShape,
} from '../utils/accounts';

/** Login, password reset and the revocation of login tokens. */
describe('auth: login and password reset', () => {
  const { ctx, smtp } = useAppWithMailCapture();

  const me = (token: string) => ctx.http.get('/users/me').set('Authorization', `Bearer ${token}`);

  describe('POST /auth/login', () => {
    const login = (body: object) => ctx.http.post('/auth/login').set('X-Forwarded-For', freshIp()).send(body);

    it('answers 200 {token, user} for the right password, any case of the e-mail', async () => {
      const user = await registerThroughMail(ctx, smtp, { nickname: 'Grace' });
      const res = await login({ email: ` ${user.email.toUpperCase()} `, password: user.password });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        token: expect.any(String),
        user: userShape(user.email, { id: user.id, nickname: 'Grace' }),
      });
      expect(decodeJwt(res.body.token).header.alg).toBe('HS256');
      await me(res.body.token).expect(200);
    });

    it('answers the same 401 INVALID_CREDENTIALS for a wrong password and an unknown e-mail', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const wrong = await login({ email: user.email, password: 'not the password' });
      const unknown = await login({ email: uniqueEmail('nobody'), password: 'not the password' });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body).toEqual(apiError('INVALID_CREDENTIALS'));
      expect(unknown.body).toEqual(wrong.body);
    });

    it('refuses a password that only begins with the right one of 72 bytes (bcrypt reads 72 bytes)', async () => {
      const password = 'é'.repeat(36);
      const user = await registerThroughMail(ctx, smtp, { password });
      const longer = await login({ email: user.email, password: `${password}x` });
      expect(longer.status).toBe(401);
      expect(longer.body).toEqual(apiError('INVALID_CREDENTIALS'));
      await login({ email: user.email, password }).expect(200);
    });

    it('takes as long for an unknown e-mail as for a wrong password', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const timed = async (email: string) => {
        const started = process.hrtime.bigint();
        await login({ email, password: 'not the password' }).expect(401);
        return Number(process.hrtime.bigint() - started) / 1e6;
      };
      const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 7; i++) {
        known.push(await timed(user.email));
        unknown.push(await timed(uniqueEmail('ghost')));
      }
      // A bcrypt comparison dominates both; without the dummy comparison the unknown case is ~20x faster. The
      // bound is loose because bcrypt runs below normal priority, so a loaded machine stretches single samples.
      expect(median(unknown)).toBeGreaterThan(median(known) * 0.25);
      expect(median(known)).toBeGreaterThan(median(unknown) * 0.25);
    });

    it('answers 403 ACCOUNT_DEACTIVATED for a deactivated account, only after the right password', async () => {
      const user = await registerThroughMail(ctx, smtp);
      await ctx.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [user.id]);
      const right = await login({ email: user.email, password: user.password });
      expect(right.status).toBe(403);
      expect(right.body).toEqual(apiError('ACCOUNT_DEACTIVATED'));
      const wrong = await login({ email: user.email, password: 'not the password' });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual(apiError('INVALID_CREDENTIALS'));
      await me(user.token).expect(401);
    });

    it('answers 401 INVALID_CREDENTIALS when the password was changed while it was being compared', async () => {
      const user = await registerThroughMail(ctx, smtp);
      duringNextPasswordCheck(ctx, () =>
        ctx.http
          .patch('/users/me/password')
          .set('Authorization', user.auth)
          .send({ currentPassword: user.password, newPassword: 'a changed password' })
          .expect(200),
      );
      const res = await login({ email: user.email, password: user.password });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(apiError('INVALID_CREDENTIALS'));
      await login({ email: user.email, password: 'a changed password' }).expect(200);
    });

    it.each([
      ['missing password', { email: 'a@example.com' }],
      ['missing e-mail', { password: 'whatever password' }],
      ['malformed e-mail', { email: 'nope', password: 'whatever password' }],
    ])('rejects a %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const res = await login(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });

  describe('POST /auth/forgot-password and /auth/reset-password', () => {
    it('answers the same for registered and unknown addresses, mailing only the registered one', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const unknownEmail = uniqueEmail('stranger');
      const known = await ctx.http.post('/auth/forgot-password').send({ email: user.email.toUpperCase() });
      const unknown = await ctx.http.post('/auth/forgot-password').send({ email: unknownEmail });
      expect(known.status).toBe(200);
      expect(unknown.status).toBe(200);
      expect(known.body).toEqual({ message: expect.any(String) });
      expect(unknown.body).toEqual(known.body);
      const mail = await smtp.waitFor(user.email);
      expect(mail.subject).toMatch(/password/i);
      expect(tokenFromMail(ctx, mail, MAIL_LINK.reset)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await expect(smtp.waitFor(unknownEmail, 300)).rejects.toThrow(/No mail/);
      // Both count toward the address's limit.
      const counts = await ctx.db.query(
        `SELECT address, count(*)::int AS n FROM email_sends WHERE address = ANY($1) GROUP BY address ORDER BY address`,
        [[user.email, unknownEmail]],
      );
      expect(counts).toEqual(
        expect.arrayContaining([
          { address: unknownEmail, n: 1 },
          { address: user.email, n: 2 },
        ]),
      );
    });

    it('sends no reset mail to a deactivated account, with the same answer', async () => {
      const user = await registerThroughMail(ctx, smtp);
      await ctx.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [user.id]);
      const res = await ctx.http.post('/auth/forgot-password').send({ email: user.email });
      expect(res.status).toBe(200);
      await expect(smtp.waitFor(user.email, 300)).rejects.toThrow(/No mail/);
    });

    it('resets the password, logs in, and revokes every older login token and reset link', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const older = await resetToken(ctx, smtp, user.email);
      const token = await resetToken(ctx, smtp, user.email);
      const res = await ctx.http
        .post('/auth/reset-password')
        .send({ token, password: 'a brand new password' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ token: expect.any(String), user: userShape(user.email, { id: user.id }) });
      expect(decodeJwt(res.body.token).payload.ver).toBe(1);

      const revoked = await me(user.token);
      expect(revoked.status).toBe(401);
      expect(revoked.body).toEqual(apiError('UNAUTHORIZED'));
      await me(res.body.token).expect(200);

      const oldPassword = await ctx.http
        .post('/auth/login')
        .send({ email: user.email, password: user.password });
      expect(oldPassword.status).toBe(401);
      await ctx.http
        .post('/auth/login')
        .send({ email: user.email, password: 'a brand new password' })
        .expect(200);

      for (const used of [token, older]) {
        const again = await ctx.http
          .post('/auth/reset-password')
          .send({ token: used, password: 'yet another password' });
        expect(again.status).toBe(400);
        expect(again.body).toEqual(apiError('INVALID_TOKEN'));
      }
    });

    it('lets exactly one of two concurrent resets with one token win', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const token = await resetToken(ctx, smtp, user.email);
      const results = await Promise.all(
        ['first new password', 'second new password'].map((password) =>
          ctx.http.post('/auth/reset-password').send({ token, password }),
        ),
      );
      expect(results.map((res) => res.status).sort()).toEqual([200, 400]);
      const [row] = await ctx.db.query(`SELECT token_version FROM users WHERE id = $1`, [user.id]);
      expect(row.token_version).toBe(1);
    });

    it('answers 400 INVALID_TOKEN for unknown, expired and registration tokens', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const expiring = await resetToken(ctx, smtp, user.email);
      await ctx.db.query(
        `UPDATE auth_tokens SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`,
        [tokenHash(expiring)],
      );
      const registration = await registrationToken(ctx, smtp, uniqueEmail());
      for (const token of ['nope', expiring, registration]) {
        const res = await ctx.http
          .post('/auth/reset-password')
          .send({ token, password: 'a brand new password' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(apiError('INVALID_TOKEN'));
      }
      await ctx.http.post('/auth/login').send({ email: user.email, password: user.password }).expect(200);
    });

    it('answers 403 ACCOUNT_DEACTIVATED when the account was deactivated after the mail, changing nothing', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const token = await resetToken(ctx, smtp, user.email);
      await ctx.db.query(`UPDATE users SET is_active = false WHERE id = $1`, [user.id]);
      const res = await ctx.http
        .post('/auth/reset-password')
        .send({ token, password: 'a brand new password' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(apiError('ACCOUNT_DEACTIVATED'));
      const [row] = await ctx.db.query(`SELECT token_version FROM users WHERE id = $1`, [user.id]);
      expect(row.token_version).toBe(0);
    });

    it.each([
      ['short password', { token: 'abc', password: 'short' }],
      ['missing token', { password: 'a brand new password' }],
    ])('rejects a %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const res = await ctx.http.post('/auth/reset-password').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('rejects a malformed forgot-password body with 400 VALIDATION_ERROR', async () => {
      const res = await ctx.http.post('/auth/forgot-password').send({ email: 'nope' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });
});
