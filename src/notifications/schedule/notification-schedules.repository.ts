import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { bulkRows, Db, one, rows } from '../../database/sql';
import { Tx } from '../../database/transactions';
import { DIGEST_DELIVERY, LEFT_FOR_DIGEST } from '../entities/notification-delivery.entity';
import { quietHoldJoin } from './schedule.sql';

export type DigestFrequency = 'OFF' | 'DAILY';

/** A user's schedule; times are `HH:MM` wall-clock times of the user's time zone. */
export interface ScheduleRow {
  quietStart: string | null;
  quietEnd: string | null;
  digest: DigestFrequency;
  digestAt: string;
}

/** The schedule of a user who never saved one. */
export const DEFAULT_SCHEDULE: ScheduleRow = {
  quietStart: null,
  quietEnd: null,
  digest: 'OFF',
  digestAt: '17:00',
};

const SCHEDULE_COLUMNS = `to_char(quiet_start, 'HH24:MI') AS "quietStart", to_char(quiet_end, 'HH24:MI') AS "quietEnd",
  digest, to_char(digest_at, 'HH24:MI') AS "digestAt"`;

/**
 * Puts the held deliveries (`h`, chosen by `which`) in line with their recipient's schedule and time zone as
 * they are now (`$1`): still in quiet hours, they wait until the end those give now; no longer, they are due
 * now. Rows a claim holds are skipped; rows already in line are not written.
 */
const realignHeldSql = (which: string): string => `
  WITH aligned AS (
    SELECT h.id, coalesce(quiet.until, $1) AS next_attempt_at, quiet.until IS NOT NULL AS held
      FROM notification_deliveries h
      LEFT JOIN notification_schedules s ON s.user_id = h.user_id
      ${quietHoldJoin('$1', 'h.user_id', 's', 'true', 'quiet')}
     WHERE h.status = 'PENDING' AND h.held AND (h.locked_until IS NULL OR h.locked_until <= $1) AND ${which}
       FOR UPDATE OF h SKIP LOCKED
  ), moved AS (
    UPDATE notification_deliveries d
       SET next_attempt_at = a.next_attempt_at, held = a.held, updated_at = now()
      FROM aligned a
     WHERE d.id = a.id AND (d.next_attempt_at, d.held) IS DISTINCT FROM (a.next_attempt_at, a.held)
    RETURNING 1
  )
  SELECT count(*)::int AS moved FROM moved`;

const REALIGN_ALL = realignHeldSql('true');
const REALIGN_USER = realignHeldSql('h.user_id = $2');

/**
 * The digests due at `$1`, for every user at once: users whose schedule is DAILY, whose wall-clock time has
 * reached `digest_at` and whose local day has no digest yet (rows other instances hold are skipped). Each gets
 * a row for the day, its key making the digest once per user and local day whichever instance, restart or
 * later `digest_at` comes next. A user with e-mails waiting since the digest was switched on, and e-mail not
 * paused, also gets a DIGEST delivery (held when the moment falls in their quiet hours) that lists them; with
 * nothing waiting the day's row records that there was nothing. One statement, whatever the number of users.
 */
const MAKE_DIGESTS_SQL = `
  WITH due AS (
    SELECT s.user_id, s.digest_since, s.quiet_start, s.quiet_end, w.local_date, gen_random_uuid() AS digest_id,
           EXISTS (
             SELECT 1 FROM notification_deliveries i
              WHERE i.user_id = s.user_id AND i.status = 'SKIPPED' AND i.last_error = '${LEFT_FOR_DIGEST}'
                AND i.digest_id IS NULL AND i.updated_at >= s.digest_since
           ) AS has_items
      FROM notification_schedules s
      JOIN users u ON u.id = s.user_id AND u.is_active
      CROSS JOIN LATERAL (
        SELECT wall::date AS local_date, wall::time AS local_time
          FROM notification_wall_clock($1, u.timezone) AS wall
      ) w
     WHERE s.digest = 'DAILY' AND w.local_time >= s.digest_at
       AND NOT EXISTS (
         SELECT 1 FROM notification_digest_days y WHERE y.user_id = s.user_id AND y.local_date = w.local_date)
       FOR UPDATE OF s SKIP LOCKED
  ), addressed AS (
    SELECT due.*, coalesce(p.address, u.email) AS address
      FROM due
      JOIN users u ON u.id = due.user_id
      LEFT JOIN notification_prefs p ON p.user_id = due.user_id AND p.channel = 'EMAIL'
     WHERE due.has_items AND coalesce(p.is_enabled, true)
  ), days AS (
    INSERT INTO notification_digest_days (user_id, local_date, delivery_id)
    SELECT due.user_id, due.local_date, a.digest_id
      FROM due LEFT JOIN addressed a ON a.user_id = due.user_id
    ON CONFLICT DO NOTHING
    RETURNING user_id, delivery_id
  ), digests AS (
    INSERT INTO notification_deliveries (id, user_id, type, channel, address, next_attempt_at, held)
    SELECT a.digest_id, a.user_id, '${DIGEST_DELIVERY}', 'EMAIL', a.address, coalesce(quiet.until, $1),
           quiet.until IS NOT NULL
      FROM days
      JOIN addressed a ON a.digest_id = days.delivery_id
      ${quietHoldJoin('$1', 'a.user_id', 'a', 'true', 'quiet')}
    RETURNING id, user_id
  ), listed AS (
    UPDATE notification_deliveries i
       SET digest_id = g.id, updated_at = now()
      FROM digests g JOIN addressed a ON a.digest_id = g.id
     WHERE i.user_id = g.user_id AND i.status = 'SKIPPED' AND i.last_error = '${LEFT_FOR_DIGEST}'
       AND i.digest_id IS NULL AND i.updated_at >= a.digest_since
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM days)::int AS days, (SELECT count(*) FROM digests)::int AS digests,
         (SELECT count(*) FROM listed)::int AS items`;

export interface DigestRun {
  /** Users whose digest moment was handled. */
  days: number;
  /** DIGEST deliveries made. */
  digests: number;
  /** Notifications they list. */
  items: number;
}

/** The users' notification schedules (`notification_schedules`) and the work they cause: holds and digests. */
@Injectable()
export class NotificationSchedulesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(userId: string): Promise<ScheduleRow> {
    const row = await one<ScheduleRow>(
      this.dataSource,
      `SELECT ${SCHEDULE_COLUMNS} FROM notification_schedules WHERE user_id = $1`,
      [userId],
    );
    return row ?? DEFAULT_SCHEDULE;
  }

  /**
   * Creates or replaces the user's schedule. Switching the digest on (from OFF or no schedule) starts what it
   * collects now; switching it off ends that, and what it collected stays in the inbox only.
   */
  async save(tx: Tx, userId: string, schedule: ScheduleRow): Promise<ScheduleRow> {
    const row = await one<ScheduleRow>(
      tx,
      `INSERT INTO notification_schedules AS s (user_id, quiet_start, quiet_end, digest, digest_at, digest_since)
       VALUES ($1, $2, $3, $4::varchar, $5, CASE WHEN $4::varchar = 'DAILY' THEN now() END)
       ON CONFLICT (user_id) DO UPDATE
         SET quiet_start = EXCLUDED.quiet_start, quiet_end = EXCLUDED.quiet_end, digest = EXCLUDED.digest,
             digest_at = EXCLUDED.digest_at,
             digest_since = CASE WHEN EXCLUDED.digest = 'DAILY' THEN coalesce(s.digest_since, now()) END,
             updated_at = now()
       RETURNING ${SCHEDULE_COLUMNS}`,
      [userId, schedule.quietStart, schedule.quietEnd, schedule.digest, schedule.digestAt],
    );
    return row!;
  }

  /** Realigns the held deliveries of one user at `now` (see realignHeldSql); answers how many moved. */
  async realignHeldOf(db: Db, userId: string, now: Date): Promise<number> {
    return (await one<{ moved: number }>(db, REALIGN_USER, [now, userId]))!.moved;
  }

  /** Realigns every held delivery at `now`, in one statement; answers how many moved. */
  async realignHeld(now: Date, limitMs: number): Promise<number> {
    return (await bulkRows<{ moved: number }>(this.dataSource, limitMs, REALIGN_ALL, [now]))[0].moved;
  }

  /** Makes the digests due at `now`, for every user at once (see MAKE_DIGESTS_SQL). */
  async makeDueDigests(now: Date, limitMs: number): Promise<DigestRun> {
    return (await bulkRows<DigestRun>(this.dataSource, limitMs, MAKE_DIGESTS_SQL, [now]))[0];
  }

  /**
   * Deletes up to `batch` records of digest days older than two days (a local day is over everywhere by
   * then, so they no longer decide anything); answers how many.
   */
  async deleteOldDigestDays(batch: number): Promise<number> {
    const deleted = await rows<{ n: number }>(
      this.dataSource,
      `WITH gone AS (
         DELETE FROM notification_digest_days
          WHERE (user_id, local_date) IN (
            SELECT user_id, local_date FROM notification_digest_days
             WHERE local_date < current_date - 2 LIMIT $1)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [batch],
    );
    return deleted[0].n;
  }
}
