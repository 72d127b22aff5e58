import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The live inbox (`GET /users/me/notifications/stream`).
 * - `notification_stream_tickets`: single-use tickets for EventSource clients, stored as SHA-256 hashes.
 * - `notification_streams`: the open streams of every instance, one row each, so the limit per user holds
 *   across instances; an instance renews its rows' lease while the streams live, so the rows of a crashed
 *   instance expire by themselves.
 * - A trigger on `notifications` tells every instance on `notification_inbox` whose inbox changed: the
 *   payload is `<userId> <notificationId>` when a notification enters the inbox (becomes SENT), and
 *   `<userId>` when the unread count changes otherwise (read, read-all, deleted unread). PostgreSQL sends at
 *   commit and folds identical payloads of one transaction, so a read-all sends one.
 */
export class LiveInbox1764000700000 implements MigrationInterface {
  name = 'LiveInbox1764000700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_stream_tickets (
        ticket_hash bytea PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_version integer NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX ix_notification_stream_tickets_user ON notification_stream_tickets (user_id);

      CREATE TABLE notification_streams (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        instance_id uuid NOT NULL,
        token_version integer NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX ix_notification_streams_user ON notification_streams (user_id);

      CREATE FUNCTION notify_notification_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          PERFORM pg_notify('notification_inbox', OLD.user_id::text);
        ELSIF NEW.status = 'SENT' AND (TG_OP = 'INSERT' OR OLD.status <> 'SENT') THEN
          PERFORM pg_notify('notification_inbox', NEW.user_id::text || ' ' || NEW.id::text);
        ELSE
          PERFORM pg_notify('notification_inbox', NEW.user_id::text);
        END IF;
        RETURN NULL;
      END
      $$;

      CREATE TRIGGER notifications_inbox_insert AFTER INSERT ON notifications
        FOR EACH ROW WHEN (NEW.status = 'SENT')
        EXECUTE FUNCTION notify_notification_inbox();
      CREATE TRIGGER notifications_inbox_update AFTER UPDATE ON notifications
        FOR EACH ROW
        WHEN (NEW.status = 'SENT'
          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.read_at IS DISTINCT FROM NEW.read_at))
        EXECUTE FUNCTION notify_notification_inbox();
      CREATE TRIGGER notifications_inbox_delete AFTER DELETE ON notifications
        FOR EACH ROW WHEN (OLD.status = 'SENT' AND OLD.read_at IS NULL)
        EXECUTE FUNCTION notify_notification_inbox();
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TRIGGER notifications_inbox_delete ON notifications;
      DROP TRIGGER notifications_inbox_update ON notifications;
      DROP TRIGGER notifications_inbox_insert ON notifications;
      DROP FUNCTION notify_notification_inbox();
      DROP TABLE notification_streams;
      DROP TABLE notification_stream_tickets;
    `);
  }
}
