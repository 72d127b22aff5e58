import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';
import type { MailMessage } from '../../mail/mail-sender';
import { DeliveryJob, PermanentDeliveryError } from '../channels/notification-channel';
import { MailPayload } from '../entities/notification-delivery.entity';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { NotificationType } from '../entities/notification.entity';

/**
 * How long a claim holds a delivery. Longer than any send may take (webhook and Telegram 10 s, SMTP 30 s);
 * a worker that crashed mid-send loses its claims when it runs out.
 */
const LEASE_SECONDS = 120;
/** Backoff never waits longer than a day, whatever DELIVERY_RETRY_BASE_SECONDS and the attempt. */
const MAX_BACKOFF_SECONDS = 86_400;
/** Stored error text is cut to this length. */
const MAX_ERROR_LENGTH = 1000;

interface ClaimedRow {
  id: string;
  channel: NotificationChannelName;
  address: string;
  attempts: number;
  payload: MailPayload | null;
  notification_id: string | null;
  type: NotificationType | null;
  title: string | null;
  content: string | null;
  created_at: Date | null;
  task_id: string | null;
  task_title: string | null;
  class_id: string | null;
  class_name: string | null;
  start_at: Date | null;
  due_at: Date | null;
  secret: string | null;
}

/**
 * Claims ready deliveries of one channel: `FOR UPDATE SKIP LOCKED` keeps concurrent claimers apart, the
 * lease (`locked_until`) keeps them apart after the claim commits, and `attempts` + 1 marks this claim.
 */
const CLAIM_SQL = `
  WITH claimed AS (
    UPDATE notification_deliveries d
       SET attempts = d.attempts + 1,
           locked_until = now() + make_interval(secs => ${LEASE_SECONDS}),
           updated_at = now()
      FROM (
        SELECT id, notification_id FROM notification_deliveries
         WHERE status = 'PENDING' AND channel = $1 AND next_attempt_at <= now()
           AND (locked_until IS NULL OR locked_until <= now())
         ORDER BY next_attempt_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED
      ) ready
      LEFT JOIN notifications n ON n.id = ready.notification_id
      LEFT JOIN notification_prefs p ON p.user_id = n.user_id AND p.channel = 'WEBHOOK'
     WHERE d.id = ready.id
    RETURNING d.id, d.channel, d.address, d.attempts, d.payload, d.notification_id, n.type, n.title, n.content,
              n.created_at, n.task_id, n.task_title, n.class_id, n.class_name, n.start_at, n.due_at, p.secret
  )
  SELECT * FROM claimed`;

/** The durable queue of channel deliveries (PostgreSQL table `notification_deliveries`). */
@Injectable()
export class DeliveryOutbox {
  constructor(
    @InjectConfig() private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * Queues a mail that carries its own content (account e-mails); the next poll of the worker sends it. With
   * `manager` the mail commits or rolls back with the caller's transaction.
   */
  async enqueueMail(
    { to, subject, text, html }: MailMessage,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    const payload: MailPayload = { subject, text, html };
    await manager.query(
      `INSERT INTO notification_deliveries (channel, address, payload) VALUES ('EMAIL', $1, $2)`,
      [to, payload],
    );
  }

  /** Claims up to `limit` deliveries of `channel` that are due. */
  async claim(channel: NotificationChannelName, limit: number): Promise<DeliveryJob[]> {
    const rows: ClaimedRow[] = await this.dataSource.query(CLAIM_SQL, [channel, limit]);
    return rows.map(toJob);
  }

  /** Records success; ignored when this claim was lost (its lease ran out and another worker took over). */
  async succeed(job: DeliveryJob): Promise<void> {
    await this.dataSource.query(
      `UPDATE notification_deliveries
          SET status = 'SENT', sent_at = now(), locked_until = NULL, updated_at = now()
        WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
      [job.id, job.attempt],
    );
  }

  /**
   * Records a failure: retried after DELIVERY_RETRY_BASE_SECONDS × 2^(attempt − 1), or FAILED with the error
   * when the attempts are used up or the error is permanent.
   */
  async fail(job: DeliveryJob, error: unknown): Promise<void> {
    const permanent = error instanceof PermanentDeliveryError;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
    const { retryBaseSeconds, maxAttempts } = this.config.notifications;
    await this.dataSource.query(
      `UPDATE notification_deliveries
          SET status = CASE WHEN $3 OR attempts >= $4 THEN 'FAILED' ELSE 'PENDING' END,
              next_attempt_at = now() + make_interval(secs => least($5::float8 * power(2, attempts - 1), $6)),
              locked_until = NULL, last_error = $7, updated_at = now()
        WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
      [job.id, job.attempt, permanent, maxAttempts, retryBaseSeconds, MAX_BACKOFF_SECONDS, message],
    );
  }
}

function toJob(row: ClaimedRow): DeliveryJob {
  const job = {
    id: row.id,
    channel: row.channel,
    address: row.address,
    attempt: row.attempts,
    secret: row.secret,
  };
  if (row.payload) return { ...job, ...row.payload, event: null };
  return {
    ...job,
    subject: row.title!,
    text: row.content!,
    html: null,
    event: {
      id: row.notification_id!,
      type: row.type!,
      createdAt: row.created_at!,
      taskId: row.task_id!,
      taskTitle: row.task_title!,
      classId: row.class_id!,
      className: row.class_name!,
      startAt: row.start_at,
      dueAt: row.due_at,
    },
  };
}
