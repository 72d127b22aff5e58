import { MailerService } from '@nestjs-modules/mailer';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
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
 * to the log (so a development setup can follow the links from the console).
 */
@Injectable()
export class MailSender implements OnApplicationShutdown {
  private readonly logger = new Logger('Mail');
  private readonly inFlight = new Set<Promise<void>>();

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

  /**
   * Starts delivery and returns at once, so the answer to the request neither waits for the SMTP server nor
   * reveals by its timing whether a mail was sent. A failure is logged without the message body.
   */
  dispatch(message: MailMessage): void {
    const delivery = this.deliver(message).catch((error: unknown) => {
      this.logger.error({ err: error, to: message.to, subject: message.subject }, 'Mail delivery failed');
    });
    this.inFlight.add(delivery);
    void delivery.finally(() => this.inFlight.delete(delivery));
  }

  /** Graceful shutdown lets deliveries that already started finish. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
