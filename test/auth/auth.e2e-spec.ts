import { randomUUID } from 'node:crypto';
import {
  apiError,
  useAppWithMailCapture,
  decodeJwt,
  MAIL_LINK,
  registerThroughMail,
  registrationToken,
  resetToken,
  tokenFromMail,
  tokenHash,
  uniqueEmail,
  userShape,
} from '../utils/accounts';
import { createSchool, createUser } from '../utils/users';

const DAY_SECONDS = 24 * 60 * 60;

/** Registration in two steps, and token checks. */
describe('auth: registration', () => {
  const { ctx, smtp } = useAppWithMailCapture({
    MAIL_FROM: 'Classroom Tasks <tasks@school.test>',
  });

  const me = (token: string) => ctx.http.get('/users/me').set('Authorization', `Bearer ${token}`);

  describe('POST /auth/register', () => {
    it('answers 200 {message} and mails a verification link to the normalized address', async () => {
      const email = uniqueEmail('Ada.Lovelace').toUpperCase();
      const res = await ctx.http.post('/auth/register').send({ email: `  ${email} ` });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      const mail = await smtp.waitFor(email.toLowerCase());
      expect(mail.to).toEqual([email.toLowerCase()]);
      expect(mail.from).toBe('tasks@school.test');
      expect(mail.subject).toMatch(/registration/i);
      const token = tokenFromMail(ctx, mail, MAIL_LINK.registration);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(mail.html).toContain(`http://app.test/register/complete?token=${token}`);
      // Only the hash is stored.
      const rows = await ctx.db.query(
        `SELECT token_hash, purpose, email, user_id FROM auth_tokens WHERE email = $1`,
        [email.toLowerCase()],
      );
      expect(rows).toEqual([
        { token_hash: tokenHash(token), purpose: 'REGISTRATION', email: email.toLowerCase(), user_id: null },
      ]);
    });

    it.each([
      ['missing e-mail', {}],
      ['malformed e-mail', { email: 'not-an-address' }],
      ['e-mail of the wrong type', { email: 42 }],
      ['unknown field', { email: uniqueEmail(), admin: true }],
    ])('rejects a %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const res = await ctx.http.post('/auth/register').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('answers 409 CONFLICT for a registered address, whatever its case', async () => {
      const user = await registerThroughMail(ctx, smtp);
      const res = await ctx.http.post('/auth/register').send({ email: user.email.toUpperCase() });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(apiError('CONFLICT'));
    });

    it('sends a new token on repetition and keeps the older one valid', async () => {
      const email = uniqueEmail();
      const first = await registrationToken(ctx, smtp, email);
      const second = await registrationToken(ctx, smtp, email);
      expect(second).not.toBe(first);
      for (const token of [first, second]) {
        const res = await ctx.http.get('/auth/verify-token').query({ token, purpose: 'REGISTRATION' });
        expect(res.body).toEqual({ valid: true, email });
      }
    });

    it('answers the same 200 when the mail cannot be delivered, without details', async () => {
      const email = uniqueEmail('bounce');
      smtp.rejectRecipients.add(email);
      const res = await ctx.http.post('/auth/register').send({ email });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      await expect(smtp.waitFor(email, 500)).rejects.toThrow(/No mail/);
    });
  });

  describe('account mails are queued in the transaction of their token', () => {
    const FAILING_PREFIX = 'queue-fails';

    /** A database that refuses to queue mail to some addresses, as a full disk or a lost connection would. */
    async function refuseQueueing(refuse: boolean): Promise<void> {
      if (!refuse) {
        await ctx.db.query(`DROP TRIGGER refuse_mail ON notification_deliveries`);
        return;
      }
      await ctx.db.query(
        `CREATE OR REPLACE FUNCTION refuse_mail() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.address LIKE '${FAILING_PREFIX}%' THEN RAISE EXCEPTION 'outbox unavailable'; END IF;
           RETURN NEW;
         END $$`,
      );
      await ctx.db.query(
        `CREATE TRIGGER refuse_mail BEFORE INSERT ON notification_deliveries
         FOR EACH ROW EXECUTE FUNCTION refuse_mail()`,
      );
    }

    const issued = async (email: string) => {
      const [row] = await ctx.db.query(
        `SELECT (SELECT count(*)::int FROM auth_tokens WHERE email = $1) AS tokens,
                (SELECT count(*)::int FROM email_sends WHERE address = $1) AS sends`,
        [email],
      );
      return row as { tokens: number; sends: number };
    };

    it('a mail that cannot be queued leaves no token and no used quota, so a retry works', async () => {
      const registering = uniqueEmail(`${FAILING_PREFIX}-register`);
      const resetting = await createUser(ctx, { email: uniqueEmail(`${FAILING_PREFIX}-reset`) });
      const mover = await createUser(ctx);
      const moving = uniqueEmail(`${FAILING_PREFIX}-move`);
      const requests: [string, string, () => Promise<{ status: number; body: unknown }>][] = [
        [
          registering,
          MAIL_LINK.registration,
          () => ctx.http.post('/auth/register').send({ email: registering }),
        ],
        [
          resetting.email,
          MAIL_LINK.reset,
          () => ctx.http.post('/auth/forgot-password').send({ email: resetting.email }),
        ],
        [
          moving,
          MAIL_LINK.emailChange,
          () =>
            ctx.http.post('/users/me/email/change').set('Authorization', mover.auth).send({ email: moving }),
        ],
      ];

      await refuseQueueing(true);
      try {
        for (const [email, , send] of requests) {
          const res = await send();
          expect(res.status).toBe(500);
          expect(res.body).toEqual(apiError('INTERNAL_ERROR'));
          expect(await issued(email)).toEqual({ tokens: 0, sends: 0 });
        }
      } finally {
        await refuseQueueing(false);
      }

      for (const [email, link, send] of requests) {
        expect((await send()).status).toBe(200);
        tokenFromMail(ctx, await smtp.waitFor(email), link);
        expect(await issued(email)).toEqual({ tokens: 1, sends: 1 });
      }
    });
  });

  describe('POST /auth/register/complete', () => {
    it('creates the user, its personal class and OWNER membership, and logs in (201 {token, user})', async () => {
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      const res = await ctx.http.post('/auth/register/complete').send({ token, password: 'a fine password' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ token: expect.any(String), user: userShape(email) });
      const { header, payload } = decodeJwt(res.body.token);
      expect(header.alg).toBe('HS256');
      expect(payload).toEqual({
        sub: res.body.user.id,
        ver: 0,
        jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        iat: expect.any(Number),
        exp: expect.any(Number),
      });
      expect((payload.exp as number) - (payload.iat as number)).toBe(7 * DAY_SECONDS);

      const classes = await ctx.db.query(
        `SELECT c.name, c.is_personal, c.owner_id, c.invite_code, m.role
         FROM classes c JOIN class_members m ON m.class_id = c.id WHERE m.user_id = $1`,
        [res.body.user.id],
      );
      expect(classes).toEqual([
        { name: 'Personal', is_personal: true, owner_id: res.body.user.id, invite_code: null, role: 'OWNER' },
      ]);
      const [stored] = await ctx.db.query(`SELECT password_hash FROM users WHERE id = $1`, [
        res.body.user.id,
      ]);
      expect(stored.password_hash).toMatch(/^\$2[aby]\$1\d\$/);
      await me(res.body.token).expect(200);
    });

    it('stores nickname, school, student number and time zone', async () => {
      const school = await createSchool(ctx);
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      const res = await ctx.http.post('/auth/register/complete').send({
        token,
        password: 'a fine password',
        nickname: '  Ada  ',
        schoolId: school.id,
        studentId: ' S-001 ',
        timezone: 'asia/shanghai',
      });
      expect(res.status).toBe(201);
      expect(res.body.user).toEqual(
        userShape(email, {
          nickname: 'Ada',
          schoolId: school.id,
          schoolName: school.name,
          studentId: 'S-001',
          timezone: 'Asia/Shanghai',
        }),
      );
    });

    it('stores a current zone name as sent, not the old alias the runtime resolves it to', async () => {
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      const res = await ctx.http
        .post('/auth/register/complete')
        .send({ token, password: 'a fine password', timezone: 'Asia/Kolkata' });
      expect(res.status).toBe(201);
      expect(res.body.user.timezone).toBe('Asia/Kolkata');
    });

    it('rolls back on a school error and leaves the token usable', async () => {
      const school = await createSchool(ctx);
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      const unknownSchool = await ctx.http
        .post('/auth/register/complete')
        .send({ token, password: 'a fine password', schoolId: randomUUID(), studentId: 'S-1' });
      expect(unknownSchool.status).toBe(400);
      expect(unknownSchool.body).toEqual(apiError('VALIDATION_ERROR'));

      const taken = await registerThroughMail(ctx, smtp);
      await ctx.db.query(`UPDATE users SET school_id = $1, student_id = 'S-9' WHERE id = $2`, [
        school.id,
        taken.id,
      ]);
      const duplicate = await ctx.http
        .post('/auth/register/complete')
        .send({ token, password: 'a fine password', schoolId: school.id, studentId: 'S-9' });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body).toEqual(apiError('CONFLICT'));
      expect(await ctx.db.query(`SELECT 1 FROM users WHERE email = $1`, [email])).toHaveLength(0);

      const ok = await ctx.http
        .post('/auth/register/complete')
        .send({ token, password: 'a fine password', schoolId: school.id, studentId: 'S-10' });
      expect(ok.status).toBe(201);
    });

    it.each([
      ['schoolId without studentId', { schoolId: randomUUID() }],
      ['studentId without schoolId', { studentId: 'S-1' }],
      ['malformed schoolId', { schoolId: 'nope', studentId: 'S-1' }],
      ['unknown time zone', { timezone: 'Mars/Olympus' }],
      ['password of 7 characters', { password: '1234567' }],
      ['password of 73 bytes', { password: 'é'.repeat(36) + 'x' }],
      ['missing password', { password: undefined }],
      ['empty nickname', { nickname: '   ' }],
      ['unknown field', { role: 'ADMIN' }],
    ])('rejects %s with 400 VALIDATION_ERROR', async (_case, fields) => {
      const token = await registrationToken(ctx, smtp, uniqueEmail());
      const res = await ctx.http
        .post('/auth/register/complete')
        .send({ token, password: 'a fine password', ...fields });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
      const check = await ctx.http.get('/auth/verify-token').query({ token, purpose: 'REGISTRATION' });
      expect(check.body.valid).toBe(true);
    });

    it('accepts a password of exactly 72 bytes and logs in with it', async () => {
      const email = uniqueEmail();
      const password = 'é'.repeat(36);
      const token = await registrationToken(ctx, smtp, email);
      await ctx.http.post('/auth/register/complete').send({ token, password }).expect(201);
      await ctx.http.post('/auth/login').send({ email, password }).expect(200);
    });

    it('answers 400 INVALID_TOKEN for an unknown, used, expired or wrong-purpose token', async () => {
      const unknown = await ctx.http
        .post('/auth/register/complete')
        .send({ token: 'A'.repeat(43), password: 'a fine password' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual(apiError('INVALID_TOKEN'));

      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      await ctx.http.post('/auth/register/complete').send({ token, password: 'a fine password' }).expect(201);
      const reused = await ctx.http
        .post('/auth/register/complete')
        .send({ token, password: 'a fine password' });
      expect(reused.status).toBe(400);
      expect(reused.body).toEqual(apiError('INVALID_TOKEN'));

      const expiring = await registrationToken(ctx, smtp, uniqueEmail());
      await ctx.db.query(
        `UPDATE auth_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`,
        [tokenHash(expiring)],
      );
      const expired = await ctx.http
        .post('/auth/register/complete')
        .send({ token: expiring, password: 'a fine password' });
      expect(expired.status).toBe(400);
      expect(expired.body).toEqual(apiError('INVALID_TOKEN'));

      const reset = await resetToken(ctx, smtp, email);
      const wrongPurpose = await ctx.http
        .post('/auth/register/complete')
        .send({ token: reset, password: 'a fine password' });
      expect(wrongPurpose.status).toBe(400);
      expect(wrongPurpose.body).toEqual(apiError('INVALID_TOKEN'));
    });

    it('lets exactly one of two concurrent redemptions of a token win', async () => {
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      const results = await Promise.all(
        ['first password', 'second password'].map((password) =>
          ctx.http.post('/auth/register/complete').send({ token, password }),
        ),
      );
      expect(results.map((res) => res.status).sort()).toEqual([201, 400]);
      expect(results.find((res) => res.status === 400)!.body).toEqual(apiError('INVALID_TOKEN'));
      expect(await ctx.db.query(`SELECT 1 FROM users WHERE email = $1`, [email])).toHaveLength(1);
      expect(
        await ctx.db.query(`SELECT 1 FROM classes c JOIN users u ON u.id = c.owner_id WHERE u.email = $1`, [
          email,
        ]),
      ).toHaveLength(1);
    });

    it('retires the other registration tokens of the address', async () => {
      const email = uniqueEmail();
      const first = await registrationToken(ctx, smtp, email);
      const second = await registrationToken(ctx, smtp, email);
      await ctx.http
        .post('/auth/register/complete')
        .send({ token: second, password: 'a fine password' })
        .expect(201);
      const check = await ctx.http.get('/auth/verify-token').query({ token: first, purpose: 'REGISTRATION' });
      expect(check.body).toEqual({ valid: false });
    });

    it('answers 409 CONFLICT when another account took the address meanwhile, keeping the token', async () => {
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      const other = await registerThroughMail(ctx, smtp);
      await ctx.http
        .post('/users/me/email/change')
        .set('Authorization', other.auth)
        .send({ email })
        .expect(200);
      const confirmation = tokenFromMail(ctx, await smtp.waitFor(email), MAIL_LINK.emailChange);
      await ctx.http
        .post('/users/me/email/confirm')
        .set('Authorization', other.auth)
        .send({ token: confirmation })
        .expect(200);

      const res = await ctx.http.post('/auth/register/complete').send({ token, password: 'a fine password' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(apiError('CONFLICT'));
      const check = await ctx.http.get('/auth/verify-token').query({ token, purpose: 'REGISTRATION' });
      expect(check.body).toEqual({ valid: true, email });
    });
  });

  describe('GET /auth/verify-token', () => {
    it('tells validity and e-mail without using the token', async () => {
      const email = uniqueEmail();
      const token = await registrationToken(ctx, smtp, email);
      for (let i = 0; i < 2; i++) {
        const res = await ctx.http.get('/auth/verify-token').query({ token, purpose: 'REGISTRATION' });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ valid: true, email });
      }
      await ctx.http.post('/auth/register/complete').send({ token, password: 'a fine password' }).expect(201);
      const used = await ctx.http.get('/auth/verify-token').query({ token, purpose: 'REGISTRATION' });
      expect(used.body).toEqual({ valid: false });
    });

    it('answers valid false for unknown, expired and wrong-purpose tokens', async () => {
      const unknown = await ctx.http
        .get('/auth/verify-token')
        .query({ token: 'x'.repeat(43), purpose: 'REGISTRATION' });
      expect(unknown.status).toBe(200);
      expect(unknown.body).toEqual({ valid: false });

      const user = await registerThroughMail(ctx, smtp);
      const reset = await resetToken(ctx, smtp, user.email);
      const asReset = await ctx.http
        .get('/auth/verify-token')
        .query({ token: reset, purpose: 'PASSWORD_RESET' });
      expect(asReset.body).toEqual({ valid: true, email: user.email });
      const asRegistration = await ctx.http
        .get('/auth/verify-token')
        .query({ token: reset, purpose: 'REGISTRATION' });
      expect(asRegistration.body).toEqual({ valid: false });

      await ctx.db.query(`UPDATE auth_tokens SET expires_at = now() WHERE token_hash = $1`, [
        tokenHash(reset),
      ]);
      const expired = await ctx.http
        .get('/auth/verify-token')
        .query({ token: reset, purpose: 'PASSWORD_RESET' });
      expect(expired.body).toEqual({ valid: false });
    });

    it.each([
      ['missing purpose', { token: 'abc' }],
      ['unknown purpose', { token: 'abc', purpose: 'EMAIL_CHANGE' }],
      ['missing token', { purpose: 'REGISTRATION' }],
    ])('rejects a %s with 400 VALIDATION_ERROR', async (_case, query) => {
      const res = await ctx.http.get('/auth/verify-token').query(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });
});
