import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { MailMessage } from '../mail/mail-sender';
import { DeliveryOutbox } from '../notifications/delivery/delivery-outbox';
import { TokenPurpose } from './entities/auth-token.entity';

interface AccountMailTemplate {
  /** The web client page the link opens. */
  path: (config: AppConfig) => string;
  subject: string;
  action: string;
}

const TEMPLATES: Record<TokenPurpose, AccountMailTemplate> = {
  [TokenPurpose.REGISTRATION]: {
    path: () => '/register/complete',
    subject: 'Complete your registration',
    action: 'To finish creating your Classroom Tasks account, open this link',
  },
  [TokenPurpose.PASSWORD_RESET]: {
    path: () => '/reset-password',
    subject: 'Reset your password',
    action: 'To choose a new password for your Classroom Tasks account, open this link',
  },
  [TokenPurpose.EMAIL_CHANGE]: {
    path: (config) => config.emailChangeLinkPath,
    subject: 'Confirm your new e-mail address',
    action: 'To use this address for your Classroom Tasks account, open this link',
  },
};

const escapeHtml = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The one way account mails (verification, password reset, e-mail change) leave the service. Callers only
 * say what to send; how it is delivered stays behind `send`.
 */
@Injectable()
export class AccountMailService {
  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly outbox: DeliveryOutbox,
  ) {}

  /**
   * Queues the mail of `kind` carrying `token` to `to` in the caller's transaction, the one that stores the
   * token: both commit or neither does, so a failure leaves no token that nobody received and no used quota,
   * and the client may simply retry. Never throws for a delivery failure: the durable outbox is sent (and
   * retried while SMTP is down) by the notification delivery worker after the commit.
   */
  async send(manager: Tx, kind: TokenPurpose, to: string, token: string): Promise<void> {
    await this.outbox.enqueueMail(this.compose(kind, to, token), manager);
  }

  private compose(kind: TokenPurpose, to: string, token: string): MailMessage {
    const template = TEMPLATES[kind];
    const link = `${this.config.appUrl}${template.path(this.config)}?token=${encodeURIComponent(token)}`;
    const expiry =
      'The link works once and expires in 1 hour. If you did not ask for it, ignore this e-mail.';
    return {
      to,
      subject: template.subject,
      text: `${template.action}:\n\n${link}\n\n${expiry}\n`,
      html:
        `<p>${escapeHtml(template.action)}:</p>` +
        `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` +
        `<p>${escapeHtml(expiry)}</p>`,
    };
  }
}
