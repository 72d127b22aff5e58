import { ConfigError, Env, str, url } from './env';

/**
 * Outgoing mail.
 * - `SMTP_URL` (unset: mails are written to the log): `smtp://…` or `smtps://…`.
 * - `MAIL_FROM` (`Classroom Tasks <no-reply@localhost>`): an address or `Name <address>`.
 */
export interface MailConfig {
  mail: { smtpUrl: string | null; from: string };
}

/** `tasks@example.org` or `Classroom Tasks <tasks@example.org>`. */
const MAIL_FROM_PATTERN = /^(?:[^<>@]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/;

export function mailConfig(env: Env): MailConfig {
  const from = str(env, 'MAIL_FROM', 'Classroom Tasks <no-reply@localhost>').trim();
  // Without an address nodemailer sends from the null sender `<>`, which servers take for a bounce.
  if (!MAIL_FROM_PATTERN.test(from)) {
    throw new ConfigError('MAIL_FROM', `must be an address or "Name <address>", got "${from}"`);
  }
  return { mail: { smtpUrl: url(env, 'SMTP_URL', null, ['smtp:', 'smtps:']), from } };
}
