import { MailerService } from '@nestjs-modules/mailer';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';

export interface MailMessage {
  to: string;
  subject: string;
  /** Plain-text part; always complete on its own (links included). */
  text: string;
  html: string;
}

/**
 * Outgoing mail: SMTP through `@nestjs-modules/mailer` when `SMTP_URL` is set, else the message is written
 * to the log (so a development setup can follow the links from the console). Called by the EMAIL channel of
 * the notification outbox, which retries failures; account mails are queued there too.
 */
@Injectable()
export class MailSender {
  private readonly logger = new Logger('Mail');

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    private readonly mailer: MailerService,
  ) {}

  /** Delivers now; a failure is thrown to the caller (for callers that retry). */
  async deliver(message: MailMessage): Promise<void> {
    if (!this.config.mail.smtpUrl) {
      this.logger.log(
        { mail: { to: message.to, subject: message.subject, text: message.text } },
        'Mail (no SMTP_URL)',
      );
      return;
    }
    await this.mailer.sendMail({
      from: this.config.mail.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  }
}
