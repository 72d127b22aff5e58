import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';

export interface MailMessage {
  to: string;
  subject: string;
  /** Plain-text part; always complete on its own (links included). */
  text: string;
  html: string;
}

/** Gives up on an SMTP server that accepted the connection but never finishes the transaction. */
const SMTP_SEND_TIMEOUT_MS = 30_000;

/**
 * Outgoing mail: SMTP through nodemailer when `SMTP_URL` is set, else the message is written to the log (so
 * a development setup can follow the links from the console). Called by the EMAIL channel of the
 * notification outbox, which retries failures; account mails are queued there too.
 */
@Injectable()
export class MailSender implements OnModuleDestroy {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter | null;

  constructor(@InjectConfig() private readonly config: AppConfig) {
    this.transport = config.mail.smtpUrl ? createTransport(config.mail.smtpUrl) : null;
  }

  /** Delivers now; a failure is thrown to the caller (for callers that retry). */
  async deliver(message: MailMessage): Promise<void> {
    if (!this.transport) {
      this.logger.log(
        { mail: { to: message.to, subject: message.subject, text: message.text } },
        'Mail (no SMTP_URL)',
      );
      return;
    }
    await withinSendTimeout(
      this.transport.sendMail({
        from: this.config.mail.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      }),
    );
  }

  /** A pooled transport (`?pool=true` in SMTP_URL) keeps connections open; they end at shutdown. */
  onModuleDestroy(): void {
    this.transport?.close();
  }
}

function withinSendTimeout<T>(sending: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`SMTP send timed out after ${SMTP_SEND_TIMEOUT_MS} ms`)),
      SMTP_SEND_TIMEOUT_MS,
    );
  });
  return Promise.race([sending, timeout]).finally(() => clearTimeout(timer));
}
