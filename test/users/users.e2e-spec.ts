import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JwtService } from '@nestjs/jwt';
import { sign as signJwt } from 'jsonwebtoken';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Response } from 'supertest';
import { UpdateMeDto } from '../../src/users/dto/update-me.dto';
import {
  apiError,
  decodeJwt,
  duringNextPasswordCheck,
  ISO_TIMESTAMP,
  MAIL_LINK,
  useAppWithMailCapture,
  tokenFromMail,
  tokenHash,
  uniqueEmail,
  userShape,
  UUID_PATTERN,
} from '../utils/accounts';
import { createSchool, createUser, newSession, TEST_PASSWORD, TestUser } from '../utils/users';

/** The logged-in user's own account: profile, password, e-mail address; and the public schools listing. */
describe('users', () => {
  const { ctx, smtp } = useAppWithMailCapture();

  const get = (user: TestUser | { auth: string }) =>
    ctx.http.get('/users/me').set('Authorization', user.auth);
  const patch = (user: TestUser, body: object) =>
    ctx.http.patch('/users/me').set('Authorization', user.auth).send(body);

  describe('authentication of every /users/me route', () => {
    const routes: [string, string, object?][] = [
      ['get', '/users/me', undefined],
      ['patch', '/users/me', { nickname: 'x' }],
      ['patch', '/users/me/password', { currentPassword: 'whatever1', newPassword: 'whatever2' }],
      ['post', '/users/me/email/change', { email: 'new@example.com' }],
      ['post', '/users/me/email/confirm', { token: 'abc' }],
    ];
    const call = (method: string, path: string, body?: object) => {
      const req = (ctx.http as unknown as Record<string, (url: string) => import('supertest').Test>)[method](
        path,
      );
      return body ? req.send(body) : req;
    };

    it.each(routes)('%s %s without a token → 401 UNAUTHORIZED', async (method, path, body) => {
      const res = await call(method, path, body);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(apiError('UNAUTHORIZED'));
    });

    it('refuses forged, expired, wrongly signed, other-algorithm and orphaned tokens with 401', async () => {
      const user = await createUser(ctx);
      const jwt = ctx.app.get(JwtService);
      const [header, payload] = user.token.split('.');
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
      const tokens = [
        'not-a-jwt',
        `${header}.${payload}.${'A'.repeat(43)}`,
        unsigned,
        await jwt.signAsync({ sub: user.id, ver: 0 }, { expiresIn: -10 }),
        await jwt.signAsync({ sub: user.id, ver: 0 }, { algorithm: 'HS512' }),
        await jwt.signAsync(
          { sub: user.id, ver: 0 },
          { secret: 'another-secret-another-secret-another-secret' },
        ),
        await jwt.signAsync({ sub: user.id }),
        await jwt.signAsync({ sub: randomUUID(), ver: 0 }),
        // Well signed, but without an expiry: every token the service issues has one.
        signJwt({ sub: user.id, ver: 0 }, ctx.config.jwt.secret, { algorithm: 'HS256' }),
      ];
      for (const token of tokens) {
        const res = await get({ auth: `Bearer ${token}` });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(apiError('UNAUTHORIZED'));
      }
      await get(user).expect(200);
    });

    it('takes the token only as the whole Authorization header "Bearer <token>"', async () => {
      const user = await createUser(ctx);
      for (const auth of [
        `Bearer ${user.token} junk`,
        `Bearer ${user.token},Bearer x`,
        `Basic ${user.token}`,
        `Token ${user.token}`,
        user.token,
        'Bearer',
      ]) {
        const res = await get({ auth });
        expect([auth, res.status, res.body]).toEqual([auth, 401, apiError('UNAUTHORIZED')]);
      }
      for (const auth of [`bearer ${user.token}`, `Bearer  ${user.token}`, `Bearer ${user.token} `]) {
        await get({ auth }).expect(200);
      }
    });
  });

  describe('GET /users/me', () => {
    it('answers the User with every field', async () => {
      const school = await createSchool(ctx);
      const user = await createUser(ctx, {
        nickname: 'Ada',
        timezone: 'Europe/Berlin',
        schoolId: school.id,
        studentId: 'S-1',
      });
      const res = await get(user);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        userShape(user.email, {
          id: user.id,
          nickname: 'Ada',
          timezone: 'Europe/Berlin',
          schoolId: school.id,
          schoolName: school.name,
          studentId: 'S-1',
        }),
      );
      expect(Object.keys(res.body)).toHaveLength(9);
    });
  });

  describe('PATCH /users/me', () => {
    it('changes nickname and time zone, and null clears the nickname', async () => {
      const user = await createUser(ctx);
      const res = await patch(user, { nickname: '  Grace ', timezone: 'america/new_york' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        userShape(user.email, { id: user.id, nickname: 'Grace', timezone: 'America/New_York' }),
      );
      const cleared = await patch(user, { nickname: null });
      expect(cleared.body).toEqual(userShape(user.email, { id: user.id, timezone: 'America/New_York' }));
      expect((await get(user)).body).toEqual(cleared.body);
    });

    it('keeps every current name of the tz database as sent, and reminders are written in it', async () => {
      // The runtime's ICU data resolves 21 of them to old aliases (Asia/Kolkata → Asia/Calcutta).
      const names = readFileSync(join(__dirname, 'tz-current-names.txt'), 'utf8')
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'));
      expect(names).toEqual(
        expect.arrayContaining(['Asia/Kolkata', 'Europe/Kyiv', 'America/Nuuk', 'Etc/UTC']),
      );
      // Every name through the request's validation and transformation, as the validation pipe runs them.
      const validated = names.map((name) => {
        const changes = plainToInstance(UpdateMeDto, { timezone: name });
        return validateSync(changes).length === 0 ? changes.timezone : `invalid: ${name}`;
      });
      expect(validated).toEqual(names);
      // Through the routes, the names the runtime renames (each through PATCH and GET) and a few others.
      const renamed = names.filter(
        (name) => new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone !== name,
      );
      expect(renamed).toEqual(expect.arrayContaining(['Asia/Kolkata', 'Europe/Kyiv', 'Etc/UTC']));
      const user = await createUser(ctx);
      const answered: string[] = [];
      for (const name of [...renamed, 'UTC', 'Europe/Berlin', 'America/Argentina/Salta']) {
        expect((await patch(user, { timezone: name })).body.timezone).toBe(name);
        answered.push((await get(user)).body.timezone);
      }
      expect(answered).toEqual([...renamed, 'UTC', 'Europe/Berlin', 'America/Argentina/Salta']);
      // The reminders' and notices' local time, which falls back to "(UTC)" for a zone PostgreSQL lacks.
      const written: { text: string }[] = await ctx.db.query(
        `SELECT notification_local_time(now(), name) AS text FROM unnest($1::text[]) WITH ORDINALITY AS z(name, n)
          ORDER BY n`,
        [names],
      );
      expect(written.map((row) => row.text.replace(/^.* \((.*)\)$/, '$1'))).toEqual(names);
    });

    it('sets, moves and clears the school with its student number', async () => {
      const [first, second] = [await createSchool(ctx), await createSchool(ctx)];
      const user = await createUser(ctx);
      const joined = await patch(user, { schoolId: first.id, studentId: 'A-1' });
      expect(joined.status).toBe(200);
      expect(joined.body).toMatchObject({ schoolId: first.id, schoolName: first.name, studentId: 'A-1' });

      const renumbered = await patch(user, { studentId: 'A-2' });
      expect(renumbered.body).toMatchObject({ schoolId: first.id, studentId: 'A-2' });

      const moved = await patch(user, { schoolId: second.id, studentId: 'B-1' });
      expect(moved.body).toMatchObject({ schoolId: second.id, schoolName: second.name, studentId: 'B-1' });

      const left = await patch(user, { schoolId: null });
      expect(left.body).toMatchObject({ schoolId: null, schoolName: null, studentId: null });
    });

    it.each([
      ['a school without student number', () => ({ schoolId: '$school' })],
      ['a student number without school', () => ({ studentId: 'X-1' })],
      ['an unknown school', () => ({ schoolId: randomUUID(), studentId: 'X-1' })],
      ['a malformed schoolId', () => ({ schoolId: 'abc', studentId: 'X-1' })],
      ['an unknown time zone', () => ({ timezone: 'Mars/Olympus' })],
      ['a null time zone', () => ({ timezone: null })],
      ['an empty nickname', () => ({ nickname: '' })],
      ['a nickname of 101 characters', () => ({ nickname: 'n'.repeat(101) })],
      ['an unknown field', () => ({ email: 'other@example.com' })],
      ['a read-only field', () => ({ isActive: false })],
    ])('rejects %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const school = await createSchool(ctx);
      const user = await createUser(ctx);
      const fields = JSON.parse(JSON.stringify(body()).replace('$school', school.id));
      const res = await patch(user, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('does not carry the student number to a new school', async () => {
      const [first, second] = [await createSchool(ctx), await createSchool(ctx)];
      const user = await createUser(ctx, { schoolId: first.id, studentId: 'A-1' });
      const res = await patch(user, { schoolId: second.id });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('answers 409 CONFLICT for a student number taken in the school, and accepts it in another', async () => {
      const [first, second] = [await createSchool(ctx), await createSchool(ctx)];
      await createUser(ctx, { schoolId: first.id, studentId: 'T-1' });
      const user = await createUser(ctx);
      const res = await patch(user, { schoolId: first.id, studentId: 'T-1' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(apiError('CONFLICT'));
      await patch(user, { schoolId: second.id, studentId: 'T-1' }).expect(200);
    });
  });

  describe('PATCH /users/me/password', () => {
    const change = (user: TestUser, body: object) =>
      ctx.http.patch('/users/me/password').set('Authorization', user.auth).send(body);

    it('answers {token, user}; other sessions end, the caller’s goes on, only the new password logs in', async () => {
      const user = await createUser(ctx);
      const otherSession = await newSession(ctx, user);
      const res = await change(user, { currentPassword: TEST_PASSWORD, newPassword: 'a changed password' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ token: expect.any(String), user: userShape(user.email, { id: user.id }) });
      expect(decodeJwt(res.body.token).payload.ver).toBe(1);

      const other = await get(otherSession);
      expect(other.status).toBe(401);
      expect(other.body).toEqual(apiError('UNAUTHORIZED'));
      await get(user).expect(200);
      await get({ auth: `Bearer ${res.body.token}` }).expect(200);

      const oldLogin = await ctx.http
        .post('/auth/login')
        .send({ email: user.email, password: TEST_PASSWORD });
      expect(oldLogin.status).toBe(401);
      expect(oldLogin.body).toEqual(apiError('INVALID_CREDENTIALS'));
      await ctx.http
        .post('/auth/login')
        .send({ email: user.email, password: 'a changed password' })
        .expect(200);
    });

    it('answers 401 INVALID_CREDENTIALS for a wrong current password and changes nothing', async () => {
      const user = await createUser(ctx);
      const res = await change(user, {
        currentPassword: 'not the password',
        newPassword: 'a changed password',
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(apiError('INVALID_CREDENTIALS'));
      await get(user).expect(200);
    });

    it('lets the first of two concurrent changes win; the other answers 401 and changes nothing', async () => {
      const user = await createUser(ctx);
      let first: Response | undefined;
      duringNextPasswordCheck(ctx, async () => {
        first = await change(user, { currentPassword: TEST_PASSWORD, newPassword: 'the first new password' });
      });
      const second = await change(user, {
        currentPassword: TEST_PASSWORD,
        newPassword: 'the second new password',
      });
      expect(first?.status).toBe(200);
      expect(second.status).toBe(401);
      expect(second.body).toEqual(apiError('INVALID_CREDENTIALS'));
      await get({ auth: `Bearer ${first?.body.token}` }).expect(200);
      const login = (password: string) => ctx.http.post('/auth/login').send({ email: user.email, password });
      await login('the first new password').expect(200);
      await login('the second new password').expect(401);
    });

    it('answers 401 for a current password that only begins with the right one of 72 bytes', async () => {
      const password = '密'.repeat(24);
      const user = await createUser(ctx);
      await change(user, { currentPassword: TEST_PASSWORD, newPassword: password }).expect(200);
      const login = await ctx.http.post('/auth/login').send({ email: user.email, password }).expect(200);
      const res = await change(
        { ...user, auth: `Bearer ${login.body.token}` },
        { currentPassword: `${password}!`, newPassword: 'a changed password' },
      );
      expect(res.status).toBe(401);
      expect(res.body).toEqual(apiError('INVALID_CREDENTIALS'));
    });

    it.each([
      ['a short new password', { currentPassword: TEST_PASSWORD, newPassword: 'short' }],
      ['a new password over 72 bytes', { currentPassword: TEST_PASSWORD, newPassword: '密'.repeat(25) }],
      ['a missing current password', { newPassword: 'a changed password' }],
    ])('rejects %s with 400 VALIDATION_ERROR', async (_case, body) => {
      const user = await createUser(ctx);
      const res = await change(user, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });

  describe('POST /users/me/email/change and /users/me/email/confirm', () => {
    const requestChange = (user: TestUser, email: string) =>
      ctx.http.post('/users/me/email/change').set('Authorization', user.auth).send({ email });
    const confirm = (user: TestUser, token: string) =>
      ctx.http.post('/users/me/email/confirm').set('Authorization', user.auth).send({ token });

    async function changeToken(user: TestUser, email: string): Promise<string> {
      const res = await requestChange(user, email);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      const mail = await smtp.waitFor(email.trim().toLowerCase());
      expect(mail.subject).toMatch(/e-mail/i);
      return tokenFromMail(ctx, mail, MAIL_LINK.emailChange);
    }

    it('mails a link to the new address; confirming moves the account there', async () => {
      const user = await createUser(ctx);
      const newEmail = uniqueEmail('moved');
      const token = await changeToken(user, `  ${newEmail.toUpperCase()} `);
      expect((await get(user)).body.email).toBe(user.email);

      const res = await confirm(user, token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(userShape(newEmail, { id: user.id }));
      expect((await get(user)).body.email).toBe(newEmail);
      await ctx.http.post('/auth/login').send({ email: newEmail, password: TEST_PASSWORD }).expect(200);
      await ctx.http.post('/auth/login').send({ email: user.email, password: TEST_PASSWORD }).expect(401);

      const again = await confirm(user, token);
      expect(again.status).toBe(400);
      expect(again.body).toEqual(apiError('INVALID_TOKEN'));
    });

    it('retires the reset links mailed to the old address', async () => {
      const user = await createUser(ctx);
      await ctx.http.post('/auth/forgot-password').send({ email: user.email }).expect(200);
      const reset = tokenFromMail(ctx, await smtp.waitFor(user.email), MAIL_LINK.reset);
      await confirm(user, await changeToken(user, uniqueEmail('moved'))).expect(200);
      const verified = await ctx.http
        .get('/auth/verify-token')
        .query({ token: reset, purpose: 'PASSWORD_RESET' });
      expect(verified.body).toEqual({ valid: false });
      const res = await ctx.http
        .post('/auth/reset-password')
        .send({ token: reset, password: 'a new password' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('INVALID_TOKEN'));
    });

    it('answers 409 CONFLICT for an address of another account, 400 for the own one', async () => {
      const user = await createUser(ctx);
      const other = await createUser(ctx);
      const taken = await requestChange(user, other.email.toUpperCase());
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual(apiError('CONFLICT'));
      const own = await requestChange(user, user.email);
      expect(own.status).toBe(400);
      expect(own.body).toEqual(apiError('VALIDATION_ERROR'));
      const malformed = await requestChange(user, 'nope');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('answers 400 INVALID_TOKEN for a token issued to another user, and keeps it for its owner', async () => {
      const owner = await createUser(ctx);
      const intruder = await createUser(ctx);
      const newEmail = uniqueEmail();
      const token = await changeToken(owner, newEmail);
      const res = await confirm(intruder, token);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(apiError('INVALID_TOKEN'));
      await confirm(owner, token).expect(200);
    });

    it('answers 400 INVALID_TOKEN for unknown, expired and other-purpose tokens', async () => {
      const user = await createUser(ctx);
      const expiring = await changeToken(user, uniqueEmail());
      await ctx.db.query(
        `UPDATE auth_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`,
        [tokenHash(expiring)],
      );
      await ctx.http.post('/auth/forgot-password').send({ email: user.email }).expect(200);
      const reset = tokenFromMail(ctx, await smtp.waitFor(user.email), MAIL_LINK.reset);
      for (const token of ['unknown-token', expiring, reset]) {
        const res = await confirm(user, token);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(apiError('INVALID_TOKEN'));
      }
      const missing = await ctx.http.post('/users/me/email/confirm').set('Authorization', user.auth).send({});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual(apiError('VALIDATION_ERROR'));
    });

    it('answers 409 CONFLICT when the address was taken meanwhile, keeping the account as it was', async () => {
      const user = await createUser(ctx);
      const newEmail = uniqueEmail();
      const token = await changeToken(user, newEmail);
      await createUser(ctx, { email: newEmail });
      const res = await confirm(user, token);
      expect(res.status).toBe(409);
      expect(res.body).toEqual(apiError('CONFLICT'));
      expect((await get(user)).body.email).toBe(user.email);
    });

    it('gives an address confirmed by two users at once to one of them; the other answers 409', async () => {
      const users = [await createUser(ctx), await createUser(ctx)];
      const newEmail = uniqueEmail();
      const tokens = [await changeToken(users[0], newEmail), await changeToken(users[1], newEmail)];
      const results = await Promise.all(users.map((user, i) => confirm(user, tokens[i])));
      expect(results.map((res) => res.status).sort()).toEqual([200, 409]);
      expect(results.find((res) => res.status === 409)?.body).toEqual(apiError('CONFLICT'));
      const emails = await Promise.all(users.map(async (user) => (await get(user)).body.email));
      expect(emails.filter((email) => email === newEmail)).toHaveLength(1);
    });

    it('lets one of two concurrent confirmations win', async () => {
      const user = await createUser(ctx);
      const newEmail = uniqueEmail();
      const token = await changeToken(user, newEmail);
      const results = await Promise.all([confirm(user, token), confirm(user, token)]);
      expect(results.map((res) => res.status).sort()).toEqual([200, 400]);
    });
  });

  describe('GET /schools', () => {
    it('lists schools without a token, sorted by name, filtered by q', async () => {
      const names = ['Zeta Academy', 'alpha college', 'Beta School'];
      for (const name of names) await createSchool(ctx, name);
      const res = await ctx.http.get('/schools');
      expect(res.status).toBe(200);
      const listed = res.body.map((school: { name: string }) => school.name);
      const ours = listed.filter((name: string) => names.includes(name));
      expect(ours).toEqual(['alpha college', 'Beta School', 'Zeta Academy']);
      for (const school of res.body) {
        expect(school).toEqual({
          id: expect.stringMatching(UUID_PATTERN),
          name: expect.any(String),
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
        });
      }

      const filtered = await ctx.http.get('/schools').query({ q: 'COLLEGE' });
      expect(filtered.body.map((school: { name: string }) => school.name)).toEqual(['alpha college']);
      const tooLong = await ctx.http.get('/schools').query({ q: 'x'.repeat(201) });
      expect(tooLong.status).toBe(400);
      expect(tooLong.body).toEqual(apiError('VALIDATION_ERROR'));
    });
  });
});
