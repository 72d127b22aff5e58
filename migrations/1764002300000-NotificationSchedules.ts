import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Quiet hours and the daily digest. A user's schedule is one row (none: no quiet hours, no digest); its times
 * are wall-clock times of the user's time zone, turned into instants when they are needed
 * (`notification_quiet_until`, `notification_wall_clock`), so a schedule or time zone changed later applies
 * without rewriting what waits. `digest_since`: when the digest was last switched on; what e-mails skipped
 * before it are not listed (switching the digest off leaves them in the inbox only).
 *
 * A delivery held by quiet hours stays PENDING with `held` set and `next_attempt_at` at their end. An e-mail
 * left for the digest is SKIPPED with `last_error` 'DIGEST' until a digest lists it (`digest_id`). One row of
 * `notification_digest_days` per user and local day the digest moment was handled, with the digest's
 * delivery or none when there was nothing to list: its key makes the digest once per user and local day.
 */
export class NotificationSchedules1764002300000 implements MigrationInterface {
  name = 'NotificationSchedules1764002300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_schedules (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        quiet_start time(0),
        quiet_end time(0),
        digest varchar(5) NOT NULL DEFAULT 'OFF',
        digest_at time(0) NOT NULL DEFAULT '17:00',
        digest_since timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_notification_schedules_digest CHECK (digest IN ('OFF', 'DAILY')),
        CONSTRAINT ck_notification_schedules_quiet
          CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND quiet_start <> quiet_end),
        CONSTRAINT ck_notification_schedules_digest_since CHECK ((digest = 'DAILY') = (digest_since IS NOT NULL))
      );
      CREATE INDEX ix_notification_schedules_daily ON notification_schedules (user_id) WHERE digest = 'DAILY';

      CREATE TABLE notification_digest_days (
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        local_date date NOT NULL,
        delivery_id uuid,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, local_date)
      );
      CREATE INDEX ix_notification_digest_days_date ON notification_digest_days (local_date);

      ALTER TABLE notification_deliveries
        ADD COLUMN held boolean NOT NULL DEFAULT false,
        ADD COLUMN digest_id uuid;
      CREATE INDEX ix_notification_deliveries_held ON notification_deliveries (user_id)
        WHERE status = 'PENDING' AND held;
      CREATE INDEX ix_notification_deliveries_digest_waiting ON notification_deliveries (user_id, updated_at)
        WHERE status = 'SKIPPED' AND last_error = 'DIGEST' AND digest_id IS NULL;
      CREATE INDEX ix_notification_deliveries_digest_items ON notification_deliveries (digest_id)
        WHERE digest_id IS NOT NULL;

      -- The wall-clock time of an instant in a time zone; an unknown zone is UTC (as notification_local_time
      -- has it) instead of failing a whole set-based statement.
      CREATE FUNCTION notification_wall_clock(at timestamptz, tz text) RETURNS timestamp
        LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN at AT TIME ZONE tz;
      EXCEPTION WHEN invalid_parameter_value THEN
        RETURN at AT TIME ZONE 'UTC';
      END $$;

      -- The end of the quiet hours (wall-clock start and end in the zone tz; start after end spans midnight)
      -- that the instant at falls in, or null when it falls in none. The end is the wall-clock end of that
      -- night or day turned into an instant, so a night on which clocks change is still start to end on the
      -- wall; an end the change skips is the same instant one hour later.
      CREATE FUNCTION notification_quiet_until(at timestamptz, tz text, quiet_start time, quiet_end time)
        RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
      DECLARE
        wall timestamp;
        day date;
        ends timestamptz;
      BEGIN
        IF quiet_start IS NULL OR quiet_end IS NULL OR quiet_start = quiet_end THEN
          RETURN NULL;
        END IF;
        BEGIN
          wall := at AT TIME ZONE tz;
        EXCEPTION WHEN invalid_parameter_value THEN
          tz := 'UTC';
          wall := at AT TIME ZONE tz;
        END;
        day := wall::date;
        IF quiet_start < quiet_end THEN
          IF wall::time < quiet_start OR wall::time >= quiet_end THEN
            RETURN NULL;
          END IF;
        ELSIF wall::time >= quiet_start THEN
          day := day + 1;
        ELSIF wall::time >= quiet_end THEN
          RETURN NULL;
        END IF;
        ends := (day + quiet_end) AT TIME ZONE tz;
        RETURN CASE WHEN ends > at THEN ends END;
      END $$;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP FUNCTION notification_quiet_until(timestamptz, text, time, time);
      DROP FUNCTION notification_wall_clock(timestamptz, text);
      DROP INDEX ix_notification_deliveries_digest_items, ix_notification_deliveries_digest_waiting,
        ix_notification_deliveries_held;
      DELETE FROM notification_deliveries WHERE status = 'SKIPPED' AND last_error = 'DIGEST';
      ALTER TABLE notification_deliveries DROP COLUMN digest_id, DROP COLUMN held;
      DROP TABLE notification_digest_days, notification_schedules;
    `);
  }
}
