import { SmtpCapture } from '../fakes/smtp-server';
import { MAIL_LINK, tokenFromMail, uniqueEmail, userShape, useAppWithMailCapture } from '../utils/accounts';
import { TestApp } from '../utils/test-app';
import { createUser } from '../utils/users';

/** Requests an e-mail change of a new user to a new address; answers the user, the address and the mail. */
async function requestChange(ctx: TestApp, smtp: SmtpCapture) {
  const user = await createUser(ctx);
  const email = uniqueEmail('moved');
  await ctx.http.post('/users/me/email/change').set('Authorization', user.auth).send({ email }).expect(200);
  return { user, email, mail: await smtp.waitFor(email) };
}

describe('the e-mail change link: the web client page /settings/verify-email by default', () => {
  const { ctx, smtp } = useAppWithMailCapture();

  it('links to APP_URL/settings/verify-email?token=…, in both parts; the API route confirms the token', async () => {
    const { user, email, mail } = await requestChange(ctx, smtp);
    expect(MAIL_LINK.emailChange).toBe('/settings/verify-email');
    const token = tokenFromMail(ctx, mail, '/settings/verify-email');
    expect(mail.html).toContain(
      `href="http://app.test/settings/verify-email?token=${encodeURIComponent(token)}"`,
    );
    expect(mail.text).not.toContain('/email/confirm');
    const res = await ctx.http
      .post('/users/me/email/confirm')
      .set('Authorization', user.auth)
      .send({ token })
      .expect(200);
    expect(res.body).toEqual(userShape(email, { id: user.id }));
  });
});

describe('the e-mail change link: EMAIL_CHANGE_LINK_PATH=/email/confirm (the former page)', () => {
  const { ctx, smtp } = useAppWithMailCapture({ EMAIL_CHANGE_LINK_PATH: '/email/confirm' });

  it('links to APP_URL/email/confirm?token=…, and the token confirms as before', async () => {
    const { user, email, mail } = await requestChange(ctx, smtp);
    const token = tokenFromMail(ctx, mail, '/email/confirm');
    expect(mail.text).not.toContain('/settings/verify-email');
    const res = await ctx.http
      .post('/users/me/email/confirm')
      .set('Authorization', user.auth)
      .send({ token })
      .expect(200);
    expect(res.body.email).toBe(email);
  });

  it('leaves the registration link as it is', async () => {
    const email = uniqueEmail('newcomer');
    await ctx.http.post('/auth/register').send({ email }).expect(200);
    tokenFromMail(ctx, await smtp.waitFor(email), MAIL_LINK.registration);
  });
});
