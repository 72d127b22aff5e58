import { createHash, randomBytes } from 'node:crypto';
import { PasswordHasher } from '../../src/auth/password-hasher';
import { CapturedMail, SmtpCapture, startSmtpCapture } from '../fakes/smtp-server';
import { ISO_TIMESTAMP, UUID_PATTERN } from './expect';
import { beforeAllTests, createTestApp, lateBound, TestApp } from './test-app';

/** Links of account mails, relative to APP_URL; the e-mail change one is the web client's page. */
export const MAIL_LINK = {
  registration: '/register/complete',
  reset: '/reset-password',
  emailChange: '/settings/verify-email',
} as const;

/** The token of the link to `path` in the plain-text part of a mail; fails the test when absent. */
export function tokenFromMail(ctx: TestApp, mail: CapturedMail, path: string): string {
  const prefix = `${ctx.config.appUrl}${path}?token=`;
  const match = mail.text.split(/\s+/).find((word) => word.startsWith(prefix));
  if (!match) throw new Error(`No ${prefix}… link in mail "${mail.subject}": ${mail.text}`);
  return decodeURIComponent(match.slice(prefix.length));
}

/** How the service stores a token: SHA-256 hex. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

export const uniqueEmail = (prefix = 'user'): string =>
  `${prefix}-${randomBytes(5).toString('hex')}@example.com`;

export interface RegisteredUser {
  id: string;
  email: string;
  password: string;
  token: string;
  auth: string;
}

/** The whole registration flow through HTTP and the captured mail. */
export async function registerThroughMail(
  ctx: TestApp,
  smtp: SmtpCapture,
  fields: { email?: string; password?: string; nickname?: string } = {},
): Promise<RegisteredUser> {
  const email = fields.email ?? uniqueEmail();
  const password = fields.password ?? 'a fine password';
  const token = await registrationToken(ctx, smtp, email);
  const completed = await ctx.http
    .post('/auth/register/complete')
    .send({ token, password, ...(fields.nickname && { nickname: fields.nickname }) });
  if (completed.status !== 201) throw new Error(`register/complete answered ${completed.status}`);
  return {
    id: completed.body.user.id,
    email,
    password,
    token: completed.body.token,
    auth: `Bearer ${completed.body.token}`,
  };
}

export { apiError, ISO_TIMESTAMP, UUID_PATTERN } from './expect';

/** The User resource with defaults of a fresh account; `fields` override. */
export const userShape = (email: string, fields: Record<string, unknown> = {}) => ({
  id: expect.stringMatching(UUID_PATTERN),
  email,
  nickname: null,
  schoolId: null,
  schoolName: null,
  studentId: null,
  timezone: 'UTC',
  isActive: true,
  createdAt: expect.stringMatching(ISO_TIMESTAMP),
  ...fields,
});

export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header, payload] = token
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  return { header, payload };
}

let ipCounter = 0;
/** A client address of its own (X-Forwarded-For is trusted from loopback), so per-IP limits do not interfere. */
export const freshIp = (): string => `198.51.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`;

/** Starts registration for `email` and returns the token of the mailed link. */
export async function registrationToken(ctx: TestApp, smtp: SmtpCapture, email: string): Promise<string> {
  const res = await ctx.http.post('/auth/register').set('X-Forwarded-For', freshIp()).send({ email });
  if (res.status !== 200) throw new Error(`register answered ${res.status}`);
  return tokenFromMail(ctx, await smtp.waitFor(email), MAIL_LINK.registration);
}

/** Asks for a password reset of `email` and returns the token of the mailed link. */
export async function resetToken(ctx: TestApp, smtp: SmtpCapture, email: string): Promise<string> {
  const res = await ctx.http.post('/auth/forgot-password').set('X-Forwarded-For', freshIp()).send({ email });
  if (res.status !== 200) throw new Error(`forgot-password answered ${res.status}`);
  return tokenFromMail(ctx, await smtp.waitFor(email), MAIL_LINK.reset);
}

export interface MailTestApp {
  ctx: TestApp;
  smtp: SmtpCapture;
  close(): Promise<void>;
}

/**
 * A test app whose mail goes to a fresh SMTP capture server; a short delivery poll keeps mail that goes
 * through the delivery worker quick to arrive.
 */
export async function startAppWithMailCapture(env: Record<string, string> = {}): Promise<MailTestApp> {
  const smtp = await startSmtpCapture();
  const ctx = await createTestApp({ SMTP_URL: smtp.url, DELIVERY_POLL_INTERVAL_MS: '50', ...env });
  return {
    ctx,
    smtp,
    async close() {
      await ctx.close();
      await smtp.close();
    },
  };
}

/** `startAppWithMailCapture` for the tests of the enclosing describe (or file): started before, closed after. */
export function useAppWithMailCapture(env: Record<string, string> = {}): { ctx: TestApp; smtp: SmtpCapture } {
  const current = beforeAllTests(() => startAppWithMailCapture(env));
  return {
    ctx: lateBound('The test app', () => current()?.ctx),
    smtp: lateBound('The SMTP capture', () => current()?.smtp),
  };
}

/**
 * Runs `meanwhile` during the service's next password comparison, after the request read the stored hash: a
 * concurrent change that lands exactly in that window, made deterministic.
 */
export function duringNextPasswordCheck(ctx: TestApp, meanwhile: () => Promise<unknown>): void {
  const hasher = ctx.app.get(PasswordHasher);
  const verify = hasher.verify.bind(hasher);
  const spy = jest.spyOn(hasher, 'verify').mockImplementationOnce(async (password, passwordHash) => {
    spy.mockRestore();
    const matches = await verify(password, passwordHash);
    await meanwhile();
    return matches;
  });
}
