import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { KeysetPlace, keysetAfterSql, keysetPositionSql } from '../../common/pagination/keyset';
import { isoSql } from '../../common/utils/time';
import { affected, Db, one, Prepared, rows } from '../../database/sql';
import {
  DeliveryStatus,
  DeliveryType,
  DIGEST_DELIVERY,
  KeptMailPayload,
  SealedMailPayload,
  TEST_EVENT,
} from '../entities/notification-delivery.entity';
import { NotificationChannelName } from '../entities/notification-pref.entity';
import { NotificationTypeDefinition, notificationTypes } from '../production/notification-types';
import { holdableSql, LEFT_FOR_DIGEST_SQL, leftForDigestSql, quietHoldJoin } from '../schedule/schedule.sql';

/**
 * How long a claim holds a delivery. Longer than any send may take (webhook and Telegram 10 s, SMTP 30 s);
 * a worker that crashed mid-send loses its claims when it runs out.
 */
const LEASE_SECONDS = 120;
/** Backoff never waits longer than a day, whatever DELIVERY_RETRY_BASE_SECONDS and the attempt. */
const MAX_BACKOFF_SECONDS = 86_400;
/** One channel's pending deliveries (`backlog`). */
export interface OutboxBacklog {
  channel: NotificationChannelName;
  pending: number;
  oldestDueSeconds: number;
}

export interface ClaimedRow {
  id: string;
  webhook_id: string;
  channel: NotificationChannelName;
  address: string;
  attempts: number;
  payload: KeptMailPayload | null;
  notification_id: string | null;
  type: DeliveryType | null;
  title: string | null;
  content: string | null;
  created_at: Date;
  task_id: string | null;
  task_title: string | null;
  class_id: string | null;
  class_name: string | null;
  start_at: Date | null;
  due_at: Date | null;
  /** What the notification's type adds to the webhook `data`. */
  data: Record<string, unknown> | null;
  secret: string | null;
  out_of_date: string | null;
  /** false: left unsent by this claim (out of date, left for the digest, or held by quiet hours). */
  send: boolean;
  user_id: string | null;
  /** A DIGEST: the recipient's local day it is of, e.g. `Mon 30 Mar 2026`. */
  digest_date: string | null;
  /** A DIGEST: the notifications it lists, oldest first. */
  digest_items: DigestItem[] | null;
}

/** One notification a digest lists; `at` is its time in the recipient's time zone. */
export interface DigestItem {
  id: string;
  title: string;
  content: string;
  taskId: string | null;
  at: string;
}

/**
 * Why a notification's delivery is no longer worth sending when its (re)try comes, or null. Checked at each
 * claim: retries and outages can hold a delivery for minutes to hours, and neither a reminder saying "not
 * submitted yet" after the submission or the deadline, nor news of a class the recipient has left, is wanted.
 * The checks of every subject come first (a deleted task, a deactivated recipient, one who left the class),
 * then those of each registered type (`staleWhen`), such as a deleted row of another module.
 * Aliases: `n` = notifications, `t` = its task (none for other subjects), `u` = its recipient.
 */
function outOfDateSql(types: NotificationTypeDefinition<never>[]): string {
  const typeChecks = types.flatMap((type) =>
    (type.staleWhen ?? []).map(
      ({ when, reason }) => `WHEN n.type = '${type.name}' AND ${when} THEN '${reason.replace(/'/g, "''")}'`,
    ),
  );
  return `CASE
    WHEN t.deleted_at IS NOT NULL THEN 'not sent: the task was deleted'
    WHEN NOT u.is_active THEN 'not sent: the recipient is deactivated'
    WHEN NOT EXISTS (SELECT 1 FROM class_members m WHERE m.class_id = n.class_id AND m.user_id = n.user_id)
      THEN 'not sent: the recipient left the class'
    ${typeChecks.join('\n    ')}
  END`;
}

/**
 * Claims ready deliveries of one channel, those without a notification (account e-mails, TEST events) first:
 * they never wait behind the fan-out of a publication (index `ix_notification_deliveries_claim`).
 * `FOR UPDATE SKIP LOCKED` keeps concurrent claimers apart, the lease (`locked_until`) keeps them apart after
 * the claim commits, and `attempts` + 1 marks this claim. `$3` is now.
 * Before a delivery is sent, in this order:
 * - one that is out of date is finished as SKIPPED with the reason (no attempt is counted);
 * - a notification's e-mail to a user whose digest is DAILY (switched on while it waited) is SKIPPED for the
 *   digest;
 * - one that falls in its recipient's quiet hours stays PENDING, `held`, until their end (no attempt counted);
 *   its schedule and time zone are read now, so changes made while it waited apply.
 * Those come back with `send` false, to be left alone. A WEBHOOK delivery is signed with the current secret of
 * the owner's preference, a redelivery included. A DIGEST comes with its items (`digest_items`).
 */
const claimSql = (types: NotificationTypeDefinition<never>[]): string => `
  WITH claimed AS (
    UPDATE notification_deliveries d
       SET attempts = d.attempts + CASE WHEN verdict.send THEN 1 ELSE 0 END,
           status = CASE WHEN verdict.skip IS NULL THEN d.status ELSE 'SKIPPED' END,
           last_error = coalesce(verdict.skip, d.last_error),
           next_attempt_at = coalesce(verdict.hold, d.next_attempt_at),
           held = verdict.hold IS NOT NULL,
           locked_until = CASE WHEN verdict.send THEN $3 + make_interval(secs => ${LEASE_SECONDS}) END,
           updated_at = now()
      FROM (
        SELECT id, notification_id, user_id, original_id, channel, type FROM notification_deliveries
         WHERE status = 'PENDING' AND channel = $1 AND next_attempt_at <= $3
           AND (locked_until IS NULL OR locked_until <= $3)
         ORDER BY notification_id IS NOT NULL, next_attempt_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED
      ) ready
      LEFT JOIN notifications n ON n.id = ready.notification_id
      LEFT JOIN notification_deliveries original ON original.id = ready.original_id
      LEFT JOIN LATERAL (
        SELECT ${outOfDateSql(types)} AS reason
          FROM users u LEFT JOIN tasks t ON t.id = n.task_id
         WHERE u.id = n.user_id
      ) stale ON true
      LEFT JOIN notification_schedules s ON s.user_id = ready.user_id
      ${quietHoldJoin('$3', 'ready.user_id', 's', holdableSql('ready'), 'quiet')}
      CROSS JOIN LATERAL (
        SELECT k.skip, CASE WHEN k.skip IS NULL THEN quiet.until END AS hold,
               k.skip IS NULL AND quiet.until IS NULL AS send
          FROM (SELECT coalesce(stale.reason,
                                CASE WHEN ${leftForDigestSql('s', 'ready')} THEN ${LEFT_FOR_DIGEST_SQL} END) AS skip) k
      ) verdict
      LEFT JOIN notification_prefs p ON p.user_id = ready.user_id AND p.channel = 'WEBHOOK'
     WHERE d.id = ready.id
    RETURNING d.id, coalesce(d.original_id, d.id) AS webhook_id, d.user_id, d.channel, d.address, d.attempts,
              d.payload, d.notification_id, d.type, n.title, n.content,
              coalesce(n.created_at, original.created_at, d.created_at) AS created_at, n.task_id, n.task_title,
              n.class_id, n.class_name, n.start_at, n.due_at, n.data, p.secret, stale.reason AS out_of_date,
              verdict.send
  )
  SELECT c.*,
         CASE WHEN c.type = '${DIGEST_DELIVERY}' AND c.send THEN (
           SELECT to_char(y.local_date, 'Dy DD Mon YYYY') FROM notification_digest_days y
            WHERE y.user_id = c.user_id AND y.delivery_id = c.webhook_id
         ) END AS digest_date,
         CASE WHEN c.type = '${DIGEST_DELIVERY}' AND c.send THEN (
           SELECT jsonb_agg(jsonb_build_object(
                    'id', n.id, 'title', n.title, 'content', n.content, 'taskId', n.task_id,
                    'at', notification_local_time(n.created_at, u.timezone))
                  ORDER BY n.created_at, n.id)
             FROM notification_deliveries i
             JOIN notifications n ON n.id = i.notification_id
             JOIN users u ON u.id = c.user_id
            WHERE i.digest_id = c.webhook_id
         ) END AS digest_items
    FROM claimed c`;

/**
 * The claim as a prepared statement: PostgreSQL takes longer to plan it than to run it, and a worker runs it
 * for every few sends. Its text depends on the registered types, so its name does too.
 */
function preparedClaim(types: NotificationTypeDefinition<never>[]): Prepared {
  const text = claimSql(types);
  return new Prepared(
    `deliveries.claim.${createHash('sha256').update(text).digest('hex').slice(0, 16)}`,
    text,
  );
}

const SUCCEED = new Prepared(
  'deliveries.succeed',
  `UPDATE notification_deliveries
      SET status = 'SENT', sent_at = now(), locked_until = NULL, updated_at = now()
    WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
);

/** A delivery of the log; timestamps are already the JSON strings (`isoSql`). */
export interface DeliveryLogRow {
  id: string;
  notificationId: string | null;
  type: DeliveryType;
  channel: NotificationChannelName;
  address: string;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  sentAt: string | null;
  createdAt: string;
  /** The place in the log (see keysetPositionSql). */
  position: string;
}

/** Columns of a DeliveryLogRow; alias `d` = notification_deliveries. The next attempt only while one is due. */
const LOG_COLUMNS = `d.id, d.notification_id AS "notificationId", d.type, d.channel, d.address, d.status,
  d.attempts, d.last_error AS "lastError",
  CASE WHEN d.status = 'PENDING' THEN ${isoSql('d.next_attempt_at')} END AS "nextAttemptAt",
  ${isoSql('d.sent_at')} AS "sentAt", ${isoSql('d.created_at')} AS "createdAt",
  ${keysetPositionSql('d.created_at')} AS position`;

export interface DeliveryLogFilter {
  channel?: NotificationChannelName;
  status?: DeliveryStatus;
  /** The place of the previous page's last row; none for the first page. */
  after?: KeysetPlace | null;
}

/** How a redelivery request went: the original's status (undefined: no such delivery of the user) and the new row. */
export interface RedeliveryOutcome {
  originalStatus?: DeliveryStatus;
  created: DeliveryLogRow | null;
}

export interface DeliveryFailure {
  permanent: boolean;
  maxAttempts: number;
  retryBaseSeconds: number;
  message: string;
}

/** The delivery outbox (table `notification_deliveries`): queueing, claims, outcomes and clean-up. */
@Injectable()
export class DeliveriesRepository {
  /** Built when the repository is made: by then every module has registered its notification types. */
  private readonly claimStatement = preparedClaim(notificationTypes());

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A mail with its own content (account e-mails), in the transaction of `db` when it has one. */
  async enqueueMail(db: Db, to: string, payload: SealedMailPayload, now: Date): Promise<void> {
    await rows(
      db,
      `INSERT INTO notification_deliveries (channel, address, payload, next_attempt_at)
       VALUES ('EMAIL', $1, $2, $3)`,
      [to, payload, now],
    );
  }

  /** A page of `userId`'s deliveries, newest first: `pageRows` rows after `filter.after`. */
  logPage(userId: string, filter: DeliveryLogFilter, pageRows: number): Promise<DeliveryLogRow[]> {
    const values: unknown[] = [userId];
    const conditions = ['d.user_id = $1'];
    if (filter.channel) conditions.push(`d.channel = $${values.push(filter.channel)}`);
    if (filter.status) conditions.push(`d.status = $${values.push(filter.status)}`);
    if (filter.after) {
      const micros = values.push(filter.after.micros);
      const id = values.push(filter.after.id);
      conditions.push(keysetAfterSql('d.created_at', 'd.id', 'desc', { micros, id }));
    }
    // Index ix_notification_deliveries_log.
    return rows<DeliveryLogRow>(
      this.dataSource,
      `SELECT ${LOG_COLUMNS} FROM notification_deliveries d
        WHERE ${conditions.join(' AND ')}
        ORDER BY d.created_at DESC, d.id DESC
        LIMIT ${pageRows}`,
      values,
    );
  }

  /**
   * Queues a TEST event through `userId`'s preference for `channel` (paused or not); null without one. EMAIL
   * without a saved preference is the account address, as dispatch and the preference list have it.
   */
  queueTest(
    db: Db,
    userId: string,
    channel: NotificationChannelName,
    now: Date,
  ): Promise<DeliveryLogRow | null> {
    return one<DeliveryLogRow>(
      db,
      `INSERT INTO notification_deliveries AS d (user_id, type, channel, address, next_attempt_at)
       SELECT user_id, '${TEST_EVENT}', channel, address, $3::timestamptz
         FROM notification_prefs WHERE user_id = $1 AND channel = $2
       UNION ALL
       SELECT u.id, '${TEST_EVENT}', 'EMAIL', u.email, $3::timestamptz FROM users u
        WHERE u.id = $1 AND $2 = 'EMAIL'
          AND NOT EXISTS (SELECT 1 FROM notification_prefs p WHERE p.user_id = $1 AND p.channel = 'EMAIL')
       RETURNING ${LOG_COLUMNS}`,
      [userId, channel, now],
    );
  }

  /**
   * Queues a copy of `userId`'s finished (SENT or FAILED) delivery `id` to the same address, unless one of its
   * chain is pending already (index `uq_notification_deliveries_pending_redelivery` decides, whoever asks).
   */
  async redeliver(db: Db, userId: string, id: string, now: Date): Promise<RedeliveryOutcome> {
    const outcome = await one<DeliveryLogRow & { originalStatus: DeliveryStatus }>(
      db,
      `WITH original AS (
         SELECT * FROM notification_deliveries WHERE id = $1 AND user_id = $2
       ), created AS (
         INSERT INTO notification_deliveries (notification_id, user_id, type, channel, address, original_id,
                                              next_attempt_at)
         SELECT notification_id, user_id, type, channel, address, coalesce(original_id, id), $3 FROM original
          WHERE status IN ('SENT', 'FAILED')
         ON CONFLICT DO NOTHING
         RETURNING *
       )
       SELECT o.status AS "originalStatus", ${LOG_COLUMNS} FROM original o LEFT JOIN created d ON true`,
      [id, userId, now],
    );
    if (!outcome) return { created: null };
    const { originalStatus, ...created } = outcome;
    return { originalStatus, created: created.id === null ? null : created };
  }

  /** Claims up to `limit` deliveries of `channel` due at `now` (see claimSql). */
  claim(channel: NotificationChannelName, limit: number, now: Date): Promise<ClaimedRow[]> {
    return rows<ClaimedRow>(this.dataSource, this.claimStatement, [channel, limit, now]);
  }

  /**
   * The outbox backlog per channel, in one statement over the pending deliveries' index: how many wait, and
   * how long the oldest of those due has been due (0 when none is: held and backed-off ones are not late).
   */
  backlog(now: Date): Promise<OutboxBacklog[]> {
    return rows<OutboxBacklog>(
      this.dataSource,
      `SELECT channel, count(*)::int AS pending,
              coalesce(extract(epoch FROM $1::timestamptz - min(next_attempt_at)
                                          FILTER (WHERE next_attempt_at <= $1)), 0)::float8 AS "oldestDueSeconds"
         FROM notification_deliveries
        WHERE status = 'PENDING'
        GROUP BY channel`,
      [now],
    );
  }

  /** Records success; ignored when this claim was lost (its lease ran out and another worker took over). */
  async succeed(id: string, attempt: number): Promise<void> {
    await rows(this.dataSource, SUCCEED, [id, attempt]);
  }

  /**
   * Records a failure: retried after `retryBaseSeconds` × 2^(attempt − 1), or FAILED with the error when the
   * attempts are used up or the error is permanent. Ignored when this claim was lost.
   */
  async fail(id: string, attempt: number, failure: DeliveryFailure, now: Date): Promise<void> {
    await rows(
      this.dataSource,
      `UPDATE notification_deliveries
          SET status = CASE WHEN $3 OR attempts >= $4 THEN 'FAILED' ELSE 'PENDING' END,
              next_attempt_at = $8::timestamptz
                + make_interval(secs => least($5::float8 * power(2, attempts - 1), $6)),
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
        now,
      ],
    );
  }

  /** Deletes up to `batch` sent account e-mails (their payload holds a one-time link); answers how many. */
  deleteSentAccountMails(batch: number): Promise<number> {
    return this.deleteBatch(`payload IS NOT NULL AND status = 'SENT'`, [], batch);
  }

  /** Deletes up to `batch` deliveries finished more than `days` ago; answers how many. */
  deleteFinishedBefore(days: number, batch: number): Promise<number> {
    return this.deleteBatch(
      `status IN ('SENT', 'FAILED', 'SKIPPED') AND updated_at < now() - make_interval(days => $1)`,
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
