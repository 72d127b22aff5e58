import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { memberDueAtSql, memberSeesTaskSql } from '../access/task-rules.sql';
import { keysetAfterSql } from '../common/pagination/keyset';
import { isoSql } from '../common/utils/time';
import { affected, Db, one, Prepared, rows } from '../database/sql';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { InboxRow, PrefRow } from './notifications.mapper';
import { CompiledFanOut, compileFanOut } from './production/notification-fan-out';
import { defineNotificationType, localTime, StaleCheck } from './production/notification-types';
import { Notifier, Produced } from './production/notifier';
import { holdableSql, LEFT_FOR_DIGEST_SQL, leftForDigestSql, quietHoldJoin } from './schedule/schedule.sql';

/** The columns of an inbox row (InboxRow), alias `n` = notifications. */
export const INBOX_COLUMNS = `n.id, n.type, n.task_id AS "taskId", n.class_id AS "classId", n.task_title AS "taskTitle",
  n.class_name AS "className", n.title, n.content, ${isoSql('n.read_at')} AS "readAt",
  ${isoSql('n.created_at')} AS "createdAt"`;

export interface InboxPageRow extends InboxRow {
  unread_count: number;
  cursor_found: boolean;
  /** The order key (`p.*` passes it through). */
  sort_at: Date | null;
}

/** Newest first, after the cursor's notification, whose place `anchor` reads. */
const AFTER_ANCHOR = keysetAfterSql('n.created_at', 'n.id', 'desc', {
  row: '(SELECT created_at, id FROM anchor)',
});

/**
 * One page of the inbox (`rows` rows), the unread count and, after a cursor (`$2`), whether the cursor names
 * a SENT notification of the caller: one prepared statement per variant and page size. The cursor is the id of
 * the previous page's last notification (a `row-id` cursor of the keyset helper): `anchor` reads its place.
 * Separate texts keep the keyset range an index condition, and a literal LIMIT lets PostgreSQL keep one
 * generic plan (with `LIMIT $n` it planned the first page anew on every call).
 */
function inboxPage(after: boolean, unreadOnly: boolean, rows: number): Prepared {
  return new Prepared(
    `notifications.inbox_${after ? 'after' : 'first'}_${unreadOnly ? 'unread' : 'all'}_${rows}`,
    `${
      after
        ? `WITH anchor AS (
             SELECT c.created_at, c.id FROM notifications c WHERE c.id = $2 AND c.user_id = $1 AND c.status = 'SENT'
           )`
        : ''
    }
     SELECT u.unread_count, ${after ? 'EXISTS (SELECT 1 FROM anchor)' : 'NULL::boolean'} AS cursor_found, p.*
       FROM (SELECT count(*)::int AS unread_count FROM notifications
              WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL) u
       LEFT JOIN LATERAL (
         SELECT ${INBOX_COLUMNS}, n.created_at AS sort_at FROM notifications n
          WHERE n.user_id = $1 AND n.status = 'SENT'
                ${unreadOnly ? 'AND n.read_at IS NULL' : ''}
                ${after ? `AND ${AFTER_ANCHOR}` : ''}
          ORDER BY n.created_at DESC, n.id DESC
          LIMIT ${rows}
       ) p ON true
      ORDER BY p.sort_at DESC, p.id DESC`,
  );
}

/** Made on first use: at most 4 variants × 50 page sizes. */
const inboxPages = new Map<string, Prepared>();

function inboxPageFor(after: boolean, unreadOnly: boolean, rows: number): Prepared {
  const key = `${after}_${unreadOnly}_${rows}`;
  let page = inboxPages.get(key);
  if (!page) {
    page = inboxPage(after, unreadOnly, rows);
    inboxPages.set(key, page);
  }
  return page;
}

const PREF_COLUMNS = `id, channel, address, is_enabled AS "isEnabled", secret`;

export interface NewPref {
  channel: NotificationChannelName;
  address: string;
  isEnabled: boolean;
  /** Stored only when the record is created. */
  secret: string | null;
  /** The id of the record when it is created; null: a random one. */
  id: string | null;
}

/** Tasks claimed per statement: each one fans out to its whole class. */
export const TASKS_PER_BATCH = 20;

/** A task members can see: published, not deleted, started (the access rule). Alias `t` = tasks. */
const VISIBLE_TASK = `${memberSeesTaskSql('t')} AND t.deleted_at IS NULL`;

const EVERY_MEMBER = { roles: 'all' } as const;

/** A member's deadline passed, moved, or the member submitted: a reminder of it is out of date. */
const REMINDER_STALE: StaleCheck[] = [
  { when: 'n.due_at <= now()', reason: 'not sent: the due time has passed' },
  {
    when: `${memberDueAtSql('t', 'n.user_id')} IS DISTINCT FROM n.due_at`,
    reason: 'not sent: the due time moved',
  },
  {
    when: 'EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = n.user_id)',
    reason: 'not sent: the recipient has submitted',
  },
];

/** A task became visible to members; the recipient's own deadline, when the task has one. */
export const TASK_PUBLISHED = defineNotificationType({
  name: 'TASK_PUBLISHED',
  subject: 'task',
  texts: ({ deadline }: Record<'deadline', string>) => ({
    title: `format('New task in %s: %s', c.name, t.title)`,
    content: `format('"%s" was published in %s. %s', t.title, c.name,
                  CASE WHEN t.due_at IS NULL THEN 'It has no due date.'
                       ELSE 'Due ' || ${localTime(deadline)} || '.' END)`,
  }),
});

/** `hours_before` the recipient's deadline `due_at`, while not submitted. */
export const TASK_DUE_REMINDER = defineNotificationType({
  name: 'TASK_DUE_REMINDER',
  subject: 'task',
  texts: ({ deadline }: Record<'deadline', string>) => ({
    title: `format('Reminder: %s is due %s', t.title, ${localTime(deadline)})`,
    content: `format('"%s" in %s is due %s, and you have not submitted it yet.', t.title, c.name, ${localTime(deadline)})`,
  }),
  staleWhen: REMINDER_STALE,
});

/**
 * Which tasks a publication scan looks at. `recent`: those that became visible (published, or started)
 * within the last hour, found through the index `ix_tasks_visible_since`, cheap enough for every poll. `all`:
 * every visible task, for the scheduled job, which also catches a start time moved far into the past and
 * tasks missed while no instance ran.
 */
export type PublicationScope = 'recent' | 'all';

const SCOPES: Record<PublicationScope, { where: string; markerProbe: string }> = {
  // `OFFSET 0` keeps the marker check a per-task index probe: the planner cannot estimate the `now()` range
  // and would otherwise hash every marker row on every poll.
  recent: {
    where: `greatest(t.published_at, t.start_at) > now()::timestamptz(3) - interval '1 hour'`,
    markerProbe: 'OFFSET 0',
  },
  // A full scan hashes the markers once, which is cheaper than a probe per task.
  all: { where: 'true', markerProbe: '' },
};

/**
 * Claim-and-fan-out statements. Each claims tasks by inserting a marker row whose key is the event
 * (`ON CONFLICT DO NOTHING`: a concurrent instance waits for the first one's commit and then claims nothing),
 * and in the same statement inserts one notification per recipient: the active members of the task's class
 * at this moment. The notifications' own unique keys guard against a duplicate once more.
 */
const publishFanOut = (scope: PublicationScope) =>
  compileFanOut({
    type: TASK_PUBLISHED,
    with: `claimed AS (
    INSERT INTO notification_task_publications (task_id)
    SELECT t.id FROM tasks t
     WHERE ${VISIBLE_TASK} AND ${SCOPES[scope].where}
       AND NOT EXISTS (
         SELECT 1 FROM notification_task_publications p WHERE p.task_id = t.id ${SCOPES[scope].markerProbe})
     LIMIT ${TASKS_PER_BATCH}
    ON CONFLICT DO NOTHING
    RETURNING task_id
  )`,
    from: 'claimed',
    subject: { task: 'claimed.task_id' },
    recipients: EVERY_MEMBER,
    vars: { deadline: memberDueAtSql('t', 'm.user_id') },
    events: 'SELECT count(*) FROM claimed',
  });

const PUBLISH: Record<PublicationScope, CompiledFanOut> = {
  recent: publishFanOut('recent'),
  all: publishFanOut('all'),
};

/**
 * Only an announced task is reminded of: a task that became visible after this run's announcements (created
 * between the two statements) is announced by the next run and reminded of after that, so TASK_PUBLISHED
 * always comes first.
 */
const ANNOUNCED_TASK = `EXISTS (SELECT 1 FROM notification_task_publications p WHERE p.task_id = t.id)`;

/** Of the offsets `$1` whose moment (`deadline` − h) has come, the smallest one, as the lateral row `o`. */
const dueOffsetSql = (deadline: string): string => `LATERAL (
    SELECT min(h) AS hours FROM unnest($1::float8[]) AS h WHERE ${deadline} - h * interval '1 hour' <= now()::timestamptz(3)
  ) o`;

/**
 * Reminders at the class-wide dueAt, to the members whose own deadline it is (not to those with a later
 * extension): of the offsets whose moment has come, the smallest one, so a task published close to its due time
 * gets one reminder rather than one per missed offset. A moved dueAt is a new key.
 */
const REMIND = compileFanOut({
  type: TASK_DUE_REMINDER,
  with: `claimed AS (
    INSERT INTO notification_task_reminders (task_id, hours_before, due_at)
    SELECT t.id, o.hours, t.due_at
      FROM tasks t
      CROSS JOIN ${dueOffsetSql('t.due_at')}
     WHERE ${VISIBLE_TASK} AND ${ANNOUNCED_TASK}
       AND t.due_at > now()::timestamptz(3) AND t.due_at <= now()::timestamptz(3) + $2::float8 * interval '1 hour'
       AND o.hours IS NOT NULL
       AND NOT EXISTS (
         SELECT 1 FROM notification_task_reminders r
          WHERE r.task_id = t.id AND r.hours_before = o.hours AND r.due_at = t.due_at)
     LIMIT ${TASKS_PER_BATCH}
    ON CONFLICT DO NOTHING
    RETURNING task_id, hours_before, due_at
  )`,
  from: 'claimed',
  subject: { task: 'claimed.task_id' },
  recipients: EVERY_MEMBER,
  where: `NOT EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = m.user_id)
       AND ${memberDueAtSql('t', 'm.user_id')} = claimed.due_at`,
  columns: { dueAt: 'claimed.due_at', hoursBefore: 'claimed.hours_before' },
  vars: { deadline: 'claimed.due_at' },
  events: 'SELECT count(*) FROM claimed',
});

/** Reminders of extended deadlines produced per statement. */
export const EXTENDED_REMINDERS_PER_BATCH = 1000;

/**
 * Reminders at the members' own deadlines: one row per extension that is the member's deadline (later than the
 * task's dueAt, see memberDeadlineSql) and whose reminder moment has come, found through the index on the
 * extensions' due time. No marker: the notifications' unique key (task, member, offset, deadline) makes each
 * one once, also with several instances, and the NOT EXISTS probe of it skips the ones made.
 */
const REMIND_EXTENDED = compileFanOut({
  type: TASK_DUE_REMINDER,
  from: `(
    SELECT e.task_id, e.user_id, e.due_at, o.hours
      FROM task_extensions e
      JOIN tasks t ON t.id = e.task_id
      JOIN users u ON u.id = e.user_id AND u.is_active
      CROSS JOIN ${dueOffsetSql('e.due_at')}
     WHERE e.due_at > now()::timestamptz(3) AND e.due_at <= now()::timestamptz(3) + $2::float8 * interval '1 hour'
       AND e.due_at > t.due_at AND ${VISIBLE_TASK} AND ${ANNOUNCED_TASK}
       AND o.hours IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = e.user_id)
       AND NOT EXISTS (
         SELECT 1 FROM notifications r
          WHERE r.type = '${TASK_DUE_REMINDER.name}' AND r.task_id = t.id AND r.user_id = e.user_id
            AND r.hours_before = o.hours AND r.due_at = e.due_at)
     LIMIT ${EXTENDED_REMINDERS_PER_BATCH}
  ) due`,
  subject: { task: 'due.task_id' },
  recipients: { user: 'due.user_id' },
  columns: { dueAt: 'due.due_at', hoursBefore: 'due.hours' },
  vars: { deadline: 'due.due_at' },
});

export interface ProductionBatch {
  tasks: number;
  notifications: number;
}

const toBatch = ({ events, notifications }: Produced): ProductionBatch => ({ tasks: events, notifications });

/** Notifications routed per statement. */
export const DISPATCH_BATCH_SIZE = 5000;

/**
 * Takes a batch of PENDING notifications (rows other instances hold are skipped), creates one delivery per
 * enabled channel preference of the recipient (EMAIL to the registration address when the recipient has no
 * EMAIL preference at all), and marks the batch SENT, which puts it in the inbox. One statement, so a
 * notification is routed exactly once. The recipient's schedule applies at once: an e-mail of a DAILY digest
 * user is SKIPPED for the digest, an e-mail or message during quiet hours waits for their end (`$1`: now).
 */
const DISPATCH_SQL = `
  WITH batch AS (
    SELECT id, user_id, type FROM notifications
     WHERE status = 'PENDING'
     ORDER BY created_at
     LIMIT ${DISPATCH_BATCH_SIZE}
     FOR UPDATE SKIP LOCKED
  ), targets AS (
    SELECT b.id AS notification_id, b.user_id, b.type, p.channel, p.address, NULL::uuid AS original_id
      FROM batch b JOIN notification_prefs p ON p.user_id = b.user_id AND p.is_enabled
    UNION ALL
    SELECT b.id, b.user_id, b.type, 'EMAIL', u.email, NULL::uuid
      FROM batch b JOIN users u ON u.id = b.user_id
     WHERE NOT EXISTS (SELECT 1 FROM notification_prefs p WHERE p.user_id = b.user_id AND p.channel = 'EMAIL')
  ), routed AS (
    INSERT INTO notification_deliveries (notification_id, user_id, type, channel, address, status, last_error,
                                         next_attempt_at, held)
    SELECT r.notification_id, r.user_id, r.type, r.channel, r.address,
           CASE WHEN digest.for_digest THEN 'SKIPPED' ELSE 'PENDING' END,
           CASE WHEN digest.for_digest THEN ${LEFT_FOR_DIGEST_SQL} END,
           CASE WHEN digest.for_digest THEN $1 ELSE coalesce(hold.until, $1) END,
           NOT digest.for_digest AND hold.until IS NOT NULL
      FROM targets r
      LEFT JOIN notification_schedules s ON s.user_id = r.user_id
      CROSS JOIN LATERAL (SELECT coalesce(${leftForDigestSql('s', 'r')}, false) AS for_digest) digest
      ${quietHoldJoin('$1', 'r.user_id', 's', holdableSql('r'), 'hold')}
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), sent AS (
    UPDATE notifications n SET status = 'SENT' FROM batch b WHERE n.id = b.id RETURNING 1
  )
  SELECT (SELECT count(*) FROM sent)::int AS notifications, (SELECT count(*) FROM routed)::int AS deliveries`;

/** The notifications (inbox), the channel preferences, and the statements that produce and route notifications. */
@Injectable()
export class NotificationsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifier: Notifier,
  ) {}

  /**
   * One page of at most `pageRows` rows of the inbox, newest first, after the notification `cursor` when
   * given; each row carries the unread count (a page without notifications is one row with id null).
   */
  inboxPage(
    userId: string,
    cursor: string | undefined,
    unreadOnly: boolean,
    pageRows: number,
  ): Promise<InboxPageRow[]> {
    return rows(
      this.dataSource,
      inboxPageFor(Boolean(cursor), unreadOnly, pageRows),
      cursor ? [userId, cursor] : [userId],
    );
  }

  async unreadCount(userId: string): Promise<number> {
    const row = await one<{ unreadCount: number }>(
      this.dataSource,
      `SELECT count(*)::int AS "unreadCount" FROM notifications WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL`,
      [userId],
    );
    return row!.unreadCount;
  }

  /** Sets readAt once; the notification's id, null when the user has no such SENT notification. */
  async markRead(db: Db, userId: string, id: string): Promise<string | null> {
    const marked = await one<{ id: string }>(
      db,
      `WITH marked AS (
         UPDATE notifications SET read_at = coalesce(read_at, now()::timestamptz(3))
          WHERE id = $1 AND user_id = $2 AND status = 'SENT'
          RETURNING id)
       SELECT id FROM marked`,
      [id, userId],
    );
    return marked?.id ?? null;
  }

  /** Answers how many notifications it marked. */
  async markAllRead(db: Db, userId: string): Promise<number> {
    const row = await one<{ updated: number }>(
      db,
      `WITH marked AS (
         UPDATE notifications SET read_at = now()::timestamptz(3)
          WHERE user_id = $1 AND status = 'SENT' AND read_at IS NULL
          RETURNING 1)
       SELECT count(*)::int AS updated FROM marked`,
      [userId],
    );
    return row!.updated;
  }

  /**
   * EMAIL, WEBHOOK, MESSENGER. Without a saved EMAIL preference, EMAIL is listed as dispatch treats it (see
   * DISPATCH_SQL): enabled, to the account's address, under the id `defaultEmailId`.
   */
  listPrefs(userId: string, defaultEmailId: string): Promise<PrefRow[]> {
    return rows<PrefRow>(
      this.dataSource,
      `SELECT * FROM (
         SELECT ${PREF_COLUMNS} FROM notification_prefs WHERE user_id = $1
         UNION ALL
         SELECT $2::uuid, 'EMAIL', u.email, true, NULL FROM users u
          WHERE u.id = $1
            AND NOT EXISTS (SELECT 1 FROM notification_prefs p WHERE p.user_id = $1 AND p.channel = 'EMAIL')
       ) prefs
       ORDER BY array_position(ARRAY['EMAIL', 'WEBHOOK', 'MESSENGER']::varchar[], channel)`,
      [userId, defaultEmailId],
    );
  }

  /** Deletes the user's preference `id`; false when the user has none of that id. */
  async deletePref(userId: string, id: string): Promise<boolean> {
    return (
      (await affected(this.dataSource, `DELETE FROM notification_prefs WHERE id = $1 AND user_id = $2`, [
        id,
        userId,
      ])) > 0
    );
  }

  /** One record per (user, channel), created or replaced atomically; a stored secret is kept. */
  async upsertPref(db: Db, userId: string, pref: NewPref): Promise<PrefRow> {
    const row = await one<PrefRow>(
      db,
      `INSERT INTO notification_prefs (id, user_id, channel, address, is_enabled, secret)
       VALUES (COALESCE($6::uuid, gen_random_uuid()), $1, $2, $3, $4, $5)
       ON CONFLICT (user_id, channel)
       DO UPDATE SET address = EXCLUDED.address, is_enabled = EXCLUDED.is_enabled, updated_at = now()::timestamptz(3)
       RETURNING ${PREF_COLUMNS}`,
      [userId, pref.channel, pref.address, pref.isEnabled, pref.secret, pref.id],
    );
    return row!;
  }

  /** One batch of TASK_PUBLISHED fan-out (see publishFanOut). */
  async publishBatch(scope: PublicationScope): Promise<ProductionBatch> {
    return toBatch(await this.notifier.produce(this.dataSource, PUBLISH[scope]));
  }

  /** One batch of TASK_DUE_REMINDER fan-out for reminders `hours` before the due time (see REMIND). */
  async remindBatch(hours: number[]): Promise<ProductionBatch> {
    return toBatch(await this.notifier.produce(this.dataSource, REMIND, [hours, Math.max(...hours)]));
  }

  /** One batch of reminders at extended deadlines (see REMIND_EXTENDED). */
  async remindExtendedBatch(hours: number[]): Promise<ProductionBatch> {
    return toBatch(
      await this.notifier.produce(this.dataSource, REMIND_EXTENDED, [hours, Math.max(...hours)]),
    );
  }

  /** Routes one batch of PENDING notifications at `now` (see DISPATCH_SQL). */
  async dispatchBatch(now: Date): Promise<{ notifications: number; deliveries: number }> {
    return (await one<{ notifications: number; deliveries: number }>(this.dataSource, DISPATCH_SQL, [now]))!;
  }
}
