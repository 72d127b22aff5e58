import { Injectable } from '@nestjs/common';
import { MailSender } from '../../mail/mail-sender';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { DeliveryJob, NotificationChannel } from './notification-channel';

const escapeHtml = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** SMTP through the mail module (`SMTP_URL`, `MAIL_FROM`; written to the log without `SMTP_URL`). */
@Injectable()
export class EmailChannel implements NotificationChannel {
  readonly name = NotificationChannelName.EMAIL;
  readonly concurrency = 10;

  constructor(private readonly sender: MailSender) {}

  async send(job: DeliveryJob): Promise<void> {
    await this.sender.deliver({
      to: job.address,
      subject: job.subject,
      text: job.text,
      html: job.html ?? `<p>${escapeHtml(job.text).replace(/\n/g, '<br>')}</p>`,
    });
  }
}
