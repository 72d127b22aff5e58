import { LEFT_FOR_DIGEST, TEST_EVENT } from '../entities/notification-delivery.entity';

/**
 * SQL of the recipients' schedules (`notification_schedules`, alias of the caller's choice) as the outbox
 * applies them to deliveries. Times are the schedule's wall-clock times in the user's current time zone,
 * turned into instants in the statement that needs them, so a changed schedule or time zone applies to what
 * waits. A user without a schedule row meets a LEFT JOIN that finds nothing: no statement of theirs is added.
 */

/**
 * Whether a delivery waits for quiet hours: an e-mail or messenger message of a notification or a digest.
 * The inbox, the live stream and webhooks never wait; nor does a TEST event or a redelivery, both asked for
 * by the user just now. `d` holds the delivery's columns (`channel`, `type`, `original_id`).
 */
export const holdableSql = (d: string): string =>
  `${d}.channel IN ('EMAIL', 'MESSENGER') AND ${d}.type <> '${TEST_EVENT}' AND ${d}.original_id IS NULL`;

/**
 * A LEFT JOIN LATERAL giving `alias.until`: the end of the quiet hours of the schedule `s` that the instant
 * `at` falls in, for the user `userId` (their time zone), when `holdable`; null otherwise. Without quiet hours
 * the users row is not even read.
 */
export const quietHoldJoin = (
  at: string,
  userId: string,
  s: string,
  holdable: string,
  alias: string,
): string =>
  `LEFT JOIN LATERAL (
      SELECT notification_quiet_until(${at}, hu.timezone, ${s}.quiet_start, ${s}.quiet_end) AS until
        FROM users hu
       WHERE hu.id = ${userId} AND ${s}.quiet_start IS NOT NULL AND ${holdable}
    ) ${alias} ON true`;

/**
 * Whether a notification's e-mail is left for the digest instead of being sent: its user's schedule `s` is
 * DAILY. Not a redelivery, which the user asked for.
 */
export const leftForDigestSql = (s: string, d: string): string =>
  `${s}.digest = 'DAILY' AND ${d}.channel = 'EMAIL' AND ${d}.notification_id IS NOT NULL AND ${d}.original_id IS NULL`;

/** The `last_error` of an e-mail left for the digest, as SQL. */
export const LEFT_FOR_DIGEST_SQL = `'${LEFT_FOR_DIGEST}'`;
