import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { memberDueAtSql } from '../../access/task-rules.sql';
import { affected, Db, rows } from '../../database/sql';
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
export interface ClaimedRow {
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
  my_due_at: Date | null;
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
    WHEN n.type = 'TASK_EXTENDED' AND ${memberDueAtSql('t', 'n.user_id')} IS DISTINCT FROM n.my_due_at
      THEN 'not sent: the extension changed'
    WHEN n.type <> 'TASK_DUE_REMINDER' THEN NULL
    WHEN n.due_at <= now() THEN 'not sent: the due time has passed'
    WHEN ${memberDueAtSql('t', 'n.user_id')} IS DISTINCT FROM n.due_at THEN 'not sent: the due time moved'
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
              n.created_at, n.task_id, n.task_title, n.class_id, n.class_name, n.start_at, n.due_at, n.my_due_at,
              p.secret,
              stale.reason AS out_of_date
  )
  SELECT * FROM claimed`;

export interface DeliveryFailure {
  permanent: boolean;
  maxAttempts: number;
  retryBaseSeconds: number;
  message: string;
}

/** The delivery outbox (table `notification_deliveries`): queueing, claims, outcomes and clean-up. */
@Injectable()
export class DeliveriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A mail with its own content (account e-mails), in the transaction of `db` when it has one. */
  async enqueueMail(db: Db, to: string, payload: MailPayload): Promise<void> {
    await rows(
      db,
      `INSERT INTO notification_deliveries (channel, address, payload) VALUES ('EMAIL', $1, $2)`,
      [to, payload],
    );
  }

  /** Claims up to `limit` due deliveries of `channel` (see CLAIM_SQL). */
  claim(channel: NotificationChannelName, limit: number): Promise<ClaimedRow[]> {
    return rows<ClaimedRow>(this.dataSource, CLAIM_SQL, [channel, limit]);
  }

  /** Records success; ignored when this claim was lost (its lease ran out and another worker took over). */
  async succeed(id: string, attempt: number): Promise<void> {
    await rows(
      this.dataSource,
      `UPDATE notification_deliveries
          SET status = 'SENT', sent_at = now(), locked_until = NULL, updated_at = now()
        WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
      [id, attempt],
    );
  }

  /**
   * Records a failure: retried after `retryBaseSeconds` × 2^(attempt − 1), or FAILED with the error when the
   * attempts are used up or the error is permanent. Ignored when this claim was lost.
   */
  async fail(id: string, attempt: number, failure: DeliveryFailure): Promise<void> {
    await rows(
      this.dataSource,
      `UPDATE notification_deliveries
          SET status = CASE WHEN $3 OR attempts >= $4 THEN 'FAILED' ELSE 'PENDING' END,
              next_attempt_at = now() + make_interval(secs => least($5::float8 * power(2, attempts - 1), $6)),
              locked_until = NULL, last_error = $7, updated_at = now()
        WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
      [
        id,
        attempt,
        failure.permanent,
        failure.maxAttempts,
        failure.retryBaseSeconds,
        MAX_BACKOFF_SECONDS,
        failure.message,
      ],
    );
  }

  /** Deletes up to `batch` sent account e-mails (their payload holds a one-time link); answers how many. */
  deleteSentAccountMails(batch: number): Promise<number> {
    return this.deleteBatch(`notification_id IS NULL AND status = 'SENT'`, [], batch);
  }

  /** Deletes up to `batch` deliveries finished more than `days` ago; answers how many. */
  deleteFinishedBefore(days: number, batch: number): Promise<number> {
    return this.deleteBatch(
      `status IN ('SENT', 'FAILED') AND updated_at < now() - make_interval(days => $1)`,
      [days],
      batch,
    );
  }

  private deleteBatch(condition: string, values: unknown[], batch: number): Promise<number> {
    return affected(
      this.dataSource,
      `DELETE FROM notification_deliveries
          WHERE id IN (SELECT id FROM notification_deliveries WHERE ${condition} LIMIT ${batch})`,
      values,
    );
  }
}
