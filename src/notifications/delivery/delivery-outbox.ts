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
  out_of_date: string | null;
}

/**
 * Why a notification's delivery is no longer worth sending when its (re)try comes, or null. Checked at each
 * claim: retries and outages can hold a delivery for minutes to hours, and neither a reminder saying "not
 * submitted yet" after the submission or the deadline, nor news of a class the recipient has left, is wanted.
 * Aliases: `n` = notifications, `t` = its task, `u` = its recipient.
 */
const OUT_OF_DATE = `CASE
    WHEN t.deleted_at IS NOT NULL THEN 'not sent: the task was deleted'
    WHEN NOT u.is_active THEN 'not sent: the recipient is deactivated'
    WHEN NOT EXISTS (SELECT 1 FROM class_members m WHERE m.class_id = t.class_id AND m.user_id = n.user_id)
      THEN 'not sent: the recipient left the class'
    WHEN n.type <> 'TASK_DUE_REMINDER' THEN NULL
    WHEN n.due_at <= now() THEN 'not sent: the due time has passed'
    WHEN t.due_at IS DISTINCT FROM n.due_at THEN 'not sent: the due time moved'
    WHEN EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = n.user_id)
      THEN 'not sent: the recipient has submitted'
  END`;

/**
 * Claims ready deliveries of one channel, account e-mails first (they never wait behind the fan-out of a
 * publication; index `ix_notification_deliveries_claim`): `FOR UPDATE SKIP LOCKED` keeps concurrent claimers
 * apart, the lease (`locked_until`) keeps them apart after the claim commits, and `attempts` + 1 marks this
 * claim.
 * A delivery that is out of date is finished as FAILED with the reason instead (no attempt is counted);
 * it comes back with `out_of_date` set, to be left unsent.
 */
const CLAIM_SQL = `
  WITH claimed AS (
    UPDATE notification_deliveries d
       SET attempts = d.attempts + CASE WHEN stale.reason IS NULL THEN 1 ELSE 0 END,
           status = CASE WHEN stale.reason IS NULL THEN d.status ELSE 'FAILED' END,
           last_error = coalesce(stale.reason, d.last_error),
           locked_until = CASE WHEN stale.reason IS NULL THEN now() + make_interval(secs => ${LEASE_SECONDS}) END,
           updated_at = now()
      FROM (
        SELECT id, notification_id FROM notification_deliveries
         WHERE status = 'PENDING' AND channel = $1 AND next_attempt_at <= now()
           AND (locked_until IS NULL OR locked_until <= now())
         ORDER BY notification_id IS NOT NULL, next_attempt_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED
      ) ready
      LEFT JOIN notifications n ON n.id = ready.notification_id
      LEFT JOIN LATERAL (
        SELECT ${OUT_OF_DATE} AS reason
          FROM tasks t JOIN users u ON u.id = n.user_id
         WHERE t.id = n.task_id
      ) stale ON true
      LEFT JOIN notification_prefs p ON p.user_id = n.user_id AND p.channel = 'WEBHOOK'
     WHERE d.id = ready.id
    RETURNING d.id, d.channel, d.address, d.attempts, d.payload, d.notification_id, n.type, n.title, n.content,
              n.created_at, n.task_id, n.task_title, n.class_id, n.class_name, n.start_at, n.due_at, p.secret,
              stale.reason AS out_of_date
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

  /** Claims up to `limit` deliveries of `channel` that are due; those out of date are finished unsent. */
  async claim(channel: NotificationChannelName, limit: number): Promise<DeliveryJob[]> {
    const jobs: DeliveryJob[] = [];
    for (;;) {
      const rows: ClaimedRow[] = await this.dataSource.query(CLAIM_SQL, [channel, limit - jobs.length]);
      const current = rows.filter((row) => row.out_of_date === null);
      jobs.push(...current.map(toJob));
      // Out-of-date rows took slots of this claim: claim again, so a backlog of them (a deleted task with
      // thousands of reminders) is finished at once instead of holding up the deliveries behind it.
      if (current.length === rows.length || jobs.length >= limit) return jobs;
    }
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
