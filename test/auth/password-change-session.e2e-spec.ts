import { runCommand } from '../../src/cli/commands';
import { apiError, resetToken, useAppWithMailCapture } from '../utils/accounts';
import { createUser, newSession, TEST_PASSWORD, TestUser } from '../utils/users';

/**
 * PATCH /users/me/password ends every other session of the user but keeps the caller's token valid, so a
 * client that ignores the new token of the answer is not logged out.
 */
describe('password change: the calling session goes on, every other one ends', () => {
  const { ctx, smtp } = useAppWithMailCapture();

  const getMe = (user: { auth: string }) => ctx.http.get('/users/me').set('Authorization', user.auth);
  const bearer = (user: TestUser, token: string): TestUser => ({ ...user, token, auth: `Bearer ${token}` });
  const changePassword = async (caller: TestUser, currentPassword: string, newPassword: string) => {
    const res = await ctx.http
      .patch('/users/me/password')
      .set('Authorization', caller.auth)
      .send({ currentPassword, newPassword });
    expect(res.status).toBe(200);
    return bearer(caller, res.body.token);
  };
  const expectRefused = async (user: TestUser) => {
    const res = await getMe(user);
    expect([res.status, res.body]).toEqual([401, apiError('UNAUTHORIZED')]);
  };

  it('keeps the caller’s token and the new one; the tokens of other logins stop working', async () => {
    const user = await createUser(ctx);
    const [laptop, phone] = [await newSession(ctx, user), await newSession(ctx, user)];
    const fresh = await changePassword(laptop, TEST_PASSWORD, 'a changed password');
    await getMe(laptop).expect(200);
    await getMe(fresh).expect(200);
    await expectRefused(phone);
    await expectRefused(user);
    // The kept token works for everything, a further change included.
    const again = await changePassword(laptop, 'a changed password', 'a second password');
    await getMe(laptop).expect(200);
    await getMe(again).expect(200);
    // The token the first change answered belonged to the session that is no longer the caller's.
    await expectRefused(fresh);
  });

  it('keeps a token issued before login tokens had an id (no jti)', async () => {
    const user = await createUser(ctx);
    const other = await newSession(ctx, user);
    await changePassword(user, TEST_PASSWORD, 'a changed password');
    await getMe(user).expect(200);
    await expectRefused(other);
  });

  it('keeps only the last caller: a change made from the new token ends the old kept one', async () => {
    const user = await createUser(ctx);
    const fresh = await changePassword(user, TEST_PASSWORD, 'a changed password');
    const newest = await changePassword(fresh, 'a changed password', 'a second password');
    await getMe(fresh).expect(200);
    await getMe(newest).expect(200);
    await expectRefused(user);
  });

  it('a password reset ends the kept session too', async () => {
    const user = await createUser(ctx);
    const fresh = await changePassword(user, TEST_PASSWORD, 'a changed password');
    const token = await resetToken(ctx, smtp, user.email);
    const reset = await ctx.http.post('/auth/reset-password').send({ token, password: 'a reset password' });
    expect(reset.status).toBe(200);
    await expectRefused(user);
    await expectRefused(fresh);
    await getMe(bearer(user, reset.body.token)).expect(200);
  });

  it('a deactivation ends the kept session for good, also after reactivation', async () => {
    const user = await createUser(ctx);
    await changePassword(user, TEST_PASSWORD, 'a changed password');
    await runCommand(ctx.app, ['users:deactivate', user.email]);
    await expectRefused(user);
    await runCommand(ctx.app, ['users:activate', user.email]);
    await expectRefused(user);
  });

  it('a failed change (wrong current password) ends no session', async () => {
    const user = await createUser(ctx);
    const other = await newSession(ctx, user);
    const res = await ctx.http
      .patch('/users/me/password')
      .set('Authorization', user.auth)
      .send({ currentPassword: 'not the password', newPassword: 'a changed password' });
    expect([res.status, res.body]).toEqual([401, apiError('INVALID_CREDENTIALS')]);
    await getMe(user).expect(200);
    await getMe(other).expect(200);
  });
});
