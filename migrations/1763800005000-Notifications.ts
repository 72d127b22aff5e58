import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Notifications: channel preferences, the inbox (one row per recipient and event), the outbox of channel
 * deliveries, and the production markers that make every event happen once across instances.
 */
export class Notifications1763800005000 implements MigrationInterface {
  name = 'Notifications1763800005000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_prefs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        channel varchar(10) NOT NULL CHECK (channel IN ('EMAIL', 'WEBHOOK', 'MESSENGER')),
        address varchar(2048) NOT NULL,
        is_enabled boolean NOT NULL DEFAULT true,
        secret varchar(100),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_notification_prefs_user_channel UNIQUE (user_id, channel),
        CONSTRAINT ck_notification_prefs_webhook_secret CHECK ((channel = 'WEBHOOK') = (secret IS NOT NULL))
      );

      -- The inbox copy: PENDING until the dispatcher has routed it to its channels, then SENT (visible).
      -- start_at, due_at, titles and texts are a snapshot taken when the event was produced.
      CREATE TABLE notifications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        type varchar(20) NOT NULL CHECK (type IN ('TASK_PUBLISHED', 'TASK_DUE_REMINDER')),
        task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        class_id uuid NOT NULL,
        task_title varchar(200) NOT NULL,
        class_name varchar(100) NOT NULL,
        start_at timestamptz,
        due_at timestamptz,
        hours_before double precision,
        title text NOT NULL,
        content text NOT NULL,
        status varchar(10) NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENT')),
        read_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_notifications_reminder_key
          CHECK (type <> 'TASK_DUE_REMINDER' OR (hours_before IS NOT NULL AND due_at IS NOT NULL))
      );
      -- At most one TASK_PUBLISHED per (task, member) and one reminder per (task, member, offset, due time).
      CREATE UNIQUE INDEX uq_notifications_published ON notifications (task_id, user_id)
        WHERE type = 'TASK_PUBLISHED';
      CREATE UNIQUE INDEX uq_notifications_reminder ON notifications (task_id, user_id, hours_before, due_at)
        WHERE type = 'TASK_DUE_REMINDER';
      CREATE INDEX ix_notifications_inbox ON notifications (user_id, created_at DESC, id DESC);
      CREATE INDEX ix_notifications_unread ON notifications (user_id) WHERE status = 'SENT' AND read_at IS NULL;
      CREATE INDEX ix_notifications_pending ON notifications (created_at) WHERE status = 'PENDING';

      -- The outbox. A delivery belongs to a notification, or carries its own mail (account e-mails).
      -- attempts counts claims; locked_until is the lease of the worker holding the claim.
      CREATE TABLE notification_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        notification_id uuid REFERENCES notifications(id) ON DELETE CASCADE,
        channel varchar(10) NOT NULL CHECK (channel IN ('EMAIL', 'WEBHOOK', 'MESSENGER')),
        address varchar(2048) NOT NULL,
        payload jsonb,
        status varchar(10) NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENT', 'FAILED')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz,
        last_error text,
        sent_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_notification_deliveries_channel UNIQUE (notification_id, channel),
        CONSTRAINT ck_notification_deliveries_source CHECK ((notification_id IS NULL) <> (payload IS NULL))
      );
      CREATE INDEX ix_notification_deliveries_ready ON notification_deliveries (channel, next_attempt_at)
        WHERE status = 'PENDING';

      -- Production markers: a row claims an event for a task; the claim and its fan-out commit together.
      CREATE TABLE notification_task_publications (
        task_id uuid PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
        produced_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE notification_task_reminders (
        task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        hours_before double precision NOT NULL,
        due_at timestamptz NOT NULL,
        produced_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, hours_before, due_at)
      );
      -- The reminder scan looks for published tasks due within the largest offset; the frequent publication
      -- scan for tasks that became visible (published or started) lately.
      CREATE INDEX ix_tasks_published_due ON tasks (due_at)
        WHERE is_published AND deleted_at IS NULL AND due_at IS NOT NULL;
      CREATE INDEX ix_tasks_visible_since ON tasks ((greatest(published_at, start_at)))
        WHERE is_published AND deleted_at IS NULL;

      -- Tasks already visible before notifications existed are not announced again.
      INSERT INTO notification_task_publications (task_id)
        SELECT id FROM tasks
         WHERE is_published AND deleted_at IS NULL AND (start_at IS NULL OR start_at <= now());

      -- A time written in the recipient's time zone; an unknown zone falls back to UTC instead of failing
      -- the whole fan-out statement.
      CREATE FUNCTION notification_local_time(ts timestamptz, tz text) RETURNS text
        LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN to_char(ts AT TIME ZONE tz, 'Dy DD Mon YYYY HH24:MI') || ' (' || tz || ')';
      EXCEPTION WHEN invalid_parameter_value THEN
        RETURN to_char(ts AT TIME ZONE 'UTC', 'Dy DD Mon YYYY HH24:MI') || ' (UTC)';
      END $$;
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP FUNCTION notification_local_time(timestamptz, text);
      DROP INDEX ix_tasks_visible_since;
      DROP INDEX ix_tasks_published_due;
      DROP TABLE notification_task_reminders, notification_task_publications, notification_deliveries,
        notifications, notification_prefs;
    `);
  }
}
