import { Logger } from '@nestjs/common';
import { MAIL_LINK, uniqueEmail, userShape } from '../utils/accounts';
import { createTestApp, TestApp } from '../utils/test-app';

interface LoggedMail {
  mail?: { to: string; subject: string; text: string };
}

/** Without SMTP_URL the account mails go to the log, complete enough to finish registration from there. */
describe('auth: mail without SMTP_URL', () => {
  let ctx: TestApp;
  let log: jest.SpyInstance;
  beforeAll(async () => {
    log = jest.spyOn(Logger.prototype, 'log');
    ctx = await createTestApp({ DELIVERY_POLL_INTERVAL_MS: '50' });
  });
  afterAll(async () => {
    log.mockRestore();
    await ctx.close();
  });

  it('logs the verification mail with its link, and the link completes the registration', async () => {
    const email = uniqueEmail('console');
    await ctx.http.post('/auth/register').send({ email }).expect(200);
    const loggedMail = () =>
      log.mock.calls.map(([entry]) => (entry as LoggedMail).mail).find((mail) => mail?.to === email);
    for (let waited = 0; !loggedMail() && waited < 5000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const logged = loggedMail();
    expect(logged).toEqual({ to: email, subject: expect.any(String), text: expect.any(String) });
    const prefix = `${ctx.config.appUrl}${MAIL_LINK.registration}?token=`;
    const link = logged!.text.split(/\s+/).find((word) => word.startsWith(prefix));
    expect(link).toBeDefined();

    const res = await ctx.http
      .post('/auth/register/complete')
      .send({ token: decodeURIComponent(link!.slice(prefix.length)), password: 'a fine password' });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual(userShape(email));
  });
});
