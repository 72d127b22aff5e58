import { Injectable } from '@nestjs/common';
import { Metrics } from '../../common/metrics/metrics';
import { type AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import type { MailMessage } from '../../mail/mail-sender';
import { DeliveryJob, PermanentDeliveryError } from '../channels/notification-channel';
import { SealedText } from '../../common/utils/sealed-text';
import { DIGEST_DELIVERY, MailPayload, TEST_EVENT } from '../entities/notification-delivery.entity';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { ClaimedRow, DeliveriesRepository } from './deliveries.repository';
import { type Clock, InjectClock } from '../../config/clock';
import { digestMail } from '../schedule/digest-mail';
import { deliveryErrorText } from './delivery-error';
import { Db } from '../../database/sql';
import { Transactions } from '../../database/transactions';

/** What a TEST event says over EMAIL and MESSENGER. */
const TEST_MESSAGE = {
  subject: 'Test notification',
  text: 'This is a test from Classroom Tasks: notifications over this channel reach you.',
};

/** The durable queue of channel deliveries (PostgreSQL table `notification_deliveries`). */
@Injectable()
export class DeliveryOutbox {
  /** Account mails carry one-time links: kept sealed for their address until sent. */
  private readonly mails: SealedText;

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    @InjectClock() private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly deliveries: DeliveriesRepository,
    private readonly metrics: Metrics,
  ) {
    this.mails = new SealedText(config.jwt.secret, 'account mail');
  }

  /**
   * Queues a mail that carries its own content (account e-mails); the next poll of the worker sends it. With
   * `manager` the mail commits or rolls back with the caller's transaction.
   */
  async enqueueMail(
    { to, subject, text, html }: MailMessage,
    db: Db = this.transactions.autocommit,
  ): Promise<void> {
    const content: Omit<MailPayload, 'subject'> = { text, html };
    await this.deliveries.enqueueMail(
      db,
      to,
      { subject, sealed: this.mails.seal(JSON.stringify(content), to) },
      this.clock.now(),
    );
  }

  /**
   * Claims up to `limit` deliveries of `channel` that are due; those out of date are finished unsent, those
   * left for the digest skipped, those in their recipient's quiet hours held until they end.
   */
  async claim(channel: NotificationChannelName, limit: number): Promise<DeliveryJob[]> {
    const jobs: DeliveryJob[] = [];
    for (;;) {
      const rows = await this.deliveries.claim(channel, limit - jobs.length, this.clock.now());
      const current = rows.filter((row) => row.send);
      for (const row of current) {
        const payload = this.openPayload(row);
        if (payload === undefined) await this.unreadable(row);
        else jobs.push(this.toJob(row, payload));
      }
      // Rows left unsent took slots of this claim: claim again, so a backlog of them (a deleted task with
      // thousands of reminders) is finished at once instead of holding up the deliveries behind it.
      if (current.length === rows.length || jobs.length >= limit) return jobs;
    }
  }

  /** Records success; ignored when this claim was lost (its lease ran out and another worker took over). */
  async succeed(job: DeliveryJob): Promise<void> {
    await this.deliveries.succeed(job.id, job.attempt);
    this.metrics.deliveries.inc({ channel: job.channel, outcome: 'sent' });
  }

  /**
   * Records a failure: retried after DELIVERY_RETRY_BASE_SECONDS × 2^(attempt − 1), or FAILED with the error
   * when the attempts are used up or the error is permanent.
   */
  async fail(job: DeliveryJob, error: unknown): Promise<void> {
    const permanent = error instanceof PermanentDeliveryError;
    const message = deliveryErrorText(error, this.secretsOf(job));
    const { retryBaseSeconds, maxAttempts } = this.config.notifications;
    await this.deliveries.fail(
      job.id,
      job.attempt,
      { permanent, maxAttempts, retryBaseSeconds, message },
      this.clock.now(),
    );
    const outcome = permanent || job.attempt >= maxAttempts ? 'failed' : 'retry';
    this.metrics.deliveries.inc({ channel: job.channel, outcome });
  }

  /** The row's mail content in clear; null for a notification; undefined when its seal does not open. */
  private openPayload({ payload, address }: ClaimedRow): MailPayload | null | undefined {
    if (!payload) return null;
    if (!('sealed' in payload)) return payload;
    const opened = this.mails.open(payload.sealed, address);
    return opened === null
      ? undefined
      : { subject: payload.subject, ...(JSON.parse(opened) as Omit<MailPayload, 'subject'>) };
  }

  /** A mail sealed under another JWT secret cannot be sent: it fails for good (the user asks again). */
  private async unreadable(row: ClaimedRow): Promise<void> {
    const { retryBaseSeconds, maxAttempts } = this.config.notifications;
    await this.deliveries.fail(
      row.id,
      row.attempts,
      {
        permanent: true,
        maxAttempts,
        retryBaseSeconds,
        message: 'The mail was sealed under another JWT_SECRET and cannot be read',
      },
      this.clock.now(),
    );
    this.metrics.deliveries.inc({ channel: row.channel, outcome: 'failed' });
  }

  /** What an attempt's error must not show: the log is read by the recipient, and by whoever holds their token. */
  private secretsOf(job: DeliveryJob): (string | null)[] {
    const smtpUrl = this.config.mail.smtpUrl;
    const smtpPassword = smtpUrl ? decodeURIComponent(new URL(smtpUrl).password) : null;
    const webhookKey = job.secret?.replace(/^whsec_/, '') ?? null;
    return [this.config.telegram.botToken, smtpPassword, job.secret, webhookKey];
  }

  private toJob(row: ClaimedRow, payload: MailPayload | null): DeliveryJob {
    if (row.type !== DIGEST_DELIVERY) return toJob(row, payload);
    const mail = digestMail(row.digest_date, row.digest_items ?? [], this.config.appUrl);
    return { ...jobOf(row), ...mail, event: null };
  }
}

const jobOf = (row: ClaimedRow) => ({
  id: row.id,
  webhookId: row.webhook_id,
  channel: row.channel,
  address: row.address,
  attempt: row.attempts,
  secret: row.secret,
});

function toJob(row: ClaimedRow, payload: MailPayload | null): DeliveryJob {
  const job = jobOf(row);
  if (payload) return { ...job, ...payload, event: null };
  if (row.type === TEST_EVENT) {
    return {
      ...job,
      ...TEST_MESSAGE,
      html: null,
      event: { id: row.webhook_id, type: TEST_EVENT, createdAt: row.created_at },
    };
  }
  return {
    ...job,
    subject: row.title!,
    text: row.content!,
    html: null,
    event: {
      id: row.notification_id!,
      type: row.type!,
      createdAt: row.created_at,
      taskId: row.task_id,
      taskTitle: row.task_title,
      classId: row.class_id!,
      className: row.class_name!,
      startAt: row.start_at,
      dueAt: row.due_at,
      data: row.data,
    },
  };
}
