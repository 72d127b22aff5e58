import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { memberDueAtSql, memberSeesTaskSql } from '../access/task-rules.sql';
import { isoSql } from '../common/utils/time';
import { affected, Db, one, Prepared, rows } from '../database/sql';
import { NotificationChannelName } from './entities/notification-pref.entity';
import { InboxRow, PrefRow } from './notifications.mapper';

/** The columns of an inbox row (InboxRow), alias `n` = notifications. */
export const INBOX_COLUMNS = `n.id, n.type, n.task_id AS "taskId", n.class_id AS "classId", n.task_title AS "taskTitle",
  n.class_name AS "className", n.title, n.content, ${isoSql('n.read_at')} AS "readAt",
  ${isoSql('n.created_at')} AS "createdAt"`;

export interface InboxPageRow extends InboxRow {
  unread_count: number;
  cursor_found: boolean;
}

/**
 * One page of the inbox (`rows` rows), the unread count and, after a cursor (`$2`), whether the cursor names
 * a SENT notification of the caller: one prepared statement per variant and page size. Separate texts keep
 * the keyset range an index condition, and a literal LIMIT lets PostgreSQL keep one generic plan (with
 * `LIMIT $n` it planned the first page anew on every call).
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
                ${after ? 'AND (n.created_at, n.id) < (SELECT created_at, id FROM anchor)' : ''}
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

/** The recipients of a task's event: active members of its class at this moment. Needs `claimed.task_id`. */
const RECIPIENTS = `
  FROM claimed
  JOIN tasks t ON t.id = claimed.task_id
  JOIN classes c ON c.id = t.class_id
  JOIN class_members m ON m.class_id = t.class_id
  JOIN users u ON u.id = m.user_id AND u.is_active`;

/** A time in the recipient's time zone (alias `u` = users), e.g. `Tue 03 Mar 2026 17:30 (Asia/Shanghai)`. */
const localTime = (time: string): string => `notification_local_time(${time}, u.timezone)`;

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
    where: `greatest(t.published_at, t.start_at) > CURRENT_TIMESTAMP(3) - interval '1 hour'`,
    markerProbe: 'OFFSET 0',
  },
  // A full scan hashes the markers once, which is cheaper than a probe per task.
  all: { where: 'true', markerProbe: '' },
};

/**
 * Claim-and-fan-out statements. Each claims tasks by inserting a marker row whose key is the event
 * (`ON CONFLICT DO NOTHING`: a concurrent instance waits for the first one's commit and then claims nothing),
 * and in the same statement inserts one notification per recipient. The notifications' own unique keys
 * guard against a duplicate once more.
 */
const publishSql = (scope: PublicationScope) => `
  WITH claimed AS (
    INSERT INTO notification_task_publications (task_id)
    SELECT t.id FROM tasks t
     WHERE ${VISIBLE_TASK} AND ${SCOPES[scope].where}
       AND NOT EXISTS (
         SELECT 1 FROM notification_task_publications p WHERE p.task_id = t.id ${SCOPES[scope].markerProbe})
     LIMIT ${TASKS_PER_BATCH}
    ON CONFLICT DO NOTHING
    RETURNING task_id
  ), produced AS (
    INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at, title, content)
    SELECT m.user_id, 'TASK_PUBLISHED', t.id, t.class_id, t.title, c.name, t.start_at, t.due_at,
           format('New task in %s: %s', c.name, t.title),
           format('"%s" was published in %s. %s', t.title, c.name,
                  CASE WHEN t.due_at IS NULL THEN 'It has no due date.'
                       ELSE 'Due ' || ${localTime(memberDueAtSql('t', 'm.user_id'))} || '.' END)
    ${RECIPIENTS}
    ON CONFLICT DO NOTHING
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM claimed)::int AS tasks, (SELECT count(*) FROM produced)::int AS notifications`;

const PUBLISH_SQL: Record<PublicationScope, string> = {
  recent: publishSql('recent'),
  all: publishSql('all'),
};

/**
 * Only an announced task is reminded of: a task that became visible after this run's announcements (created
 * between the two statements) is announced by the next run and reminded of after that, so TASK_PUBLISHED
 * always comes first.
 */
const ANNOUNCED_TASK = `EXISTS (SELECT 1 FROM notification_task_publications p WHERE p.task_id = t.id)`;

/** Of the offsets `$1` whose moment (`deadline` − h) has come, the smallest one, as the lateral row `o`. */
const dueOffsetSql = (deadline: string): string => `LATERAL (
    SELECT min(h) AS hours FROM unnest($1::float8[]) AS h WHERE ${deadline} - h * interval '1 hour' <= CURRENT_TIMESTAMP(3)
  ) o`;

const reminderTexts = (deadline: string): string => `
  format('Reminder: %s is due %s', t.title, ${localTime(deadline)}),
  format('"%s" in %s is due %s, and you have not submitted it yet.', t.title, c.name, ${localTime(deadline)})`;

/**
 * Reminders at the class-wide dueAt, to the members whose own deadline it is (not to those with a later
 * extension): of the offsets whose moment has come, the smallest one, so a task published close to its due time
 * gets one reminder rather than one per missed offset. A moved dueAt is a new key.
 */
const REMIND_SQL = `
  WITH claimed AS (
    INSERT INTO notification_task_reminders (task_id, hours_before, due_at)
    SELECT t.id, o.hours, t.due_at
      FROM tasks t
      CROSS JOIN ${dueOffsetSql('t.due_at')}
     WHERE ${VISIBLE_TASK} AND ${ANNOUNCED_TASK}
       AND t.due_at > CURRENT_TIMESTAMP(3) AND t.due_at <= CURRENT_TIMESTAMP(3) + $2::float8 * interval '1 hour'
       AND o.hours IS NOT NULL
       AND NOT EXISTS (
         SELECT 1 FROM notification_task_reminders r
          WHERE r.task_id = t.id AND r.hours_before = o.hours AND r.due_at = t.due_at)
     LIMIT ${TASKS_PER_BATCH}
    ON CONFLICT DO NOTHING
    RETURNING task_id, hours_before, due_at
  ), produced AS (
    INSERT INTO notifications
      (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at, hours_before, title, content)
    SELECT m.user_id, 'TASK_DUE_REMINDER', t.id, t.class_id, t.title, c.name, t.start_at, claimed.due_at,
           claimed.hours_before, ${reminderTexts('claimed.due_at')}
    ${RECIPIENTS}
     WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = m.user_id)
       AND ${memberDueAtSql('t', 'm.user_id')} = claimed.due_at
    ON CONFLICT DO NOTHING
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM claimed)::int AS tasks, (SELECT count(*) FROM produced)::int AS notifications`;

/** Reminders of extended deadlines produced per statement. */
export const EXTENDED_REMINDERS_PER_BATCH = 1000;

/**
 * Reminders at the members' own deadlines: one row per extension that is the member's deadline
 * (later than the task's dueAt, see memberDeadlineSql) and whose reminder moment has come, found through the
 * index on the extensions' due time. No marker: the notifications' unique key (task, member, offset, deadline)
 * makes each one once, also with several instances, and the NOT EXISTS probe of it skips the ones made.
 */
const REMIND_EXTENDED_SQL = `
  WITH produced AS (
    INSERT INTO notifications
      (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at, hours_before, title, content)
    SELECT e.user_id, 'TASK_DUE_REMINDER', t.id, t.class_id, t.title, c.name, t.start_at, e.due_at, o.hours,
           ${reminderTexts('e.due_at')}
      FROM task_extensions e
      JOIN tasks t ON t.id = e.task_id
      JOIN classes c ON c.id = t.class_id
      JOIN users u ON u.id = e.user_id AND u.is_active
      CROSS JOIN ${dueOffsetSql('e.due_at')}
     WHERE e.due_at > CURRENT_TIMESTAMP(3) AND e.due_at <= CURRENT_TIMESTAMP(3) + $2::float8 * interval '1 hour'
       AND e.due_at > t.due_at AND ${VISIBLE_TASK} AND ${ANNOUNCED_TASK}
       AND o.hours IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = e.user_id)
       AND NOT EXISTS (
         SELECT 1 FROM notifications r
          WHERE r.type = 'TASK_DUE_REMINDER' AND r.task_id = t.id AND r.user_id = e.user_id
            AND r.hours_before = o.hours AND r.due_at = e.due_at)
     LIMIT ${EXTENDED_REMINDERS_PER_BATCH}
    ON CONFLICT DO NOTHING
    RETURNING task_id
  )
  SELECT count(DISTINCT task_id)::int AS tasks, count(*)::int AS notifications FROM produced`;

/**
 * TASK_EXTENDED to the member of the extension of (`$1` task, `$2` member), while the task is visible to members
 * and the member active; nothing otherwise.
 */
const EXTENDED_SQL = `
  INSERT INTO notifications
    (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at, my_due_at, title, content)
  SELECT e.user_id, 'TASK_EXTENDED', t.id, t.class_id, t.title, c.name, t.start_at, t.due_at, e.due_at,
         format('Extension: %s is now due %s for you', t.title, ${localTime('e.due_at')}),
         format('Your deadline for "%s" in %s is now %s.', t.title, c.name, ${localTime('e.due_at')})
    FROM task_extensions e
    JOIN tasks t ON t.id = e.task_id
    JOIN classes c ON c.id = t.class_id
    JOIN users u ON u.id = e.user_id AND u.is_active
   WHERE e.task_id = $1 AND e.user_id = $2 AND ${VISIBLE_TASK}`;

/** Longest part of a comment quoted in its notification's text. */
const COMMENT_EXCERPT_LENGTH = 200;

/**
 * TASK_COMMENT for comment `$1`: to the OWNER and ADMINs of the task's class, and to the author of the comment
 * it replies to while that author can see the task; never to the comment's own author. Active members only,
 * as for the other types. The text quotes the comment, white space folded, cut at COMMENT_EXCERPT_LENGTH.
 */
const COMMENT_SQL = `
  INSERT INTO notifications
    (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at, comment_id, title, content)
  SELECT m.user_id, 'TASK_COMMENT', t.id, t.class_id, t.title, c.name, t.start_at, t.due_at, k.id,
         CASE WHEN m.user_id = r.author_id
              THEN format('%s replied to your comment on %s', author.name, t.title)
              ELSE format('New comment on %s', t.title) END,
         format('%s commented on "%s" in %s: %s', author.name, t.title, c.name,
                CASE WHEN length(excerpt.text) > ${COMMENT_EXCERPT_LENGTH}
                     THEN left(excerpt.text, ${COMMENT_EXCERPT_LENGTH - 1}) || '…' ELSE excerpt.text END)
    FROM task_comments k
    JOIN tasks t ON t.id = k.task_id
    JOIN classes c ON c.id = t.class_id
    CROSS JOIN LATERAL (
      SELECT coalesce(a.nickname, 'A class member') AS name FROM users a WHERE a.id = k.author_id
    ) author
    CROSS JOIN LATERAL (SELECT regexp_replace(k.content, '[[:space:]]+', ' ', 'g') AS text) excerpt
    LEFT JOIN task_comments r ON r.id = k.reply_to_id
    JOIN class_members m ON m.class_id = t.class_id
    JOIN users u ON u.id = m.user_id AND u.is_active
   WHERE k.id = $1 AND m.user_id <> k.author_id
     AND (m.role <> 'MEMBER' OR (m.user_id = r.author_id AND ${memberSeesTaskSql('t')}))
  ON CONFLICT DO NOTHING`;

export interface ProductionBatch {
  tasks: number;
  notifications: number;
}

/**
 * GRADE_RELEASED to the submitters of the released submissions `$1`, while they are active members of the
 * class. The unique key (task, submitter) of GRADE_RELEASED makes it once per submission, whoever releases it
 * and however often; the release time is written in the recipient's time zone.
 */
const GRADE_RELEASED_SQL = `
  INSERT INTO notifications (user_id, type, task_id, class_id, task_title, class_name, start_at, due_at, title, content)
  SELECT s.user_id, 'GRADE_RELEASED', t.id, t.class_id, t.title, c.name, t.start_at, t.due_at,
         format('Grade released: %s', t.title),
         format('Your grade for "%s" in %s was released %s.', t.title, c.name,
                notification_local_time(s.released_at, u.timezone))
    FROM submissions s
    JOIN tasks t ON t.id = s.task_id
    JOIN classes c ON c.id = t.class_id
    JOIN class_members m ON m.class_id = t.class_id AND m.user_id = s.user_id
    JOIN users u ON u.id = s.user_id AND u.is_active
   WHERE s.id = ANY($1::uuid[]) AND s.released_at IS NOT NULL
  ON CONFLICT DO NOTHING`;

/** Notifications routed per statement. */
export const DISPATCH_BATCH_SIZE = 5000;

/**
 * Takes a batch of PENDING notifications (rows other instances hold are skipped), creates one delivery per
 * enabled channel preference of the recipient (EMAIL to the registration address when the recipient has no
 * EMAIL preference at all), and marks the batch SENT, which puts it in the inbox. One statement, so a
 * notification is routed exactly once.
 */
const DISPATCH_SQL = `
  WITH batch AS (
    SELECT id, user_id, type FROM notifications
     WHERE status = 'PENDING'
     ORDER BY created_at
     LIMIT ${DISPATCH_BATCH_SIZE}
     FOR UPDATE SKIP LOCKED
  ), routed AS (
    INSERT INTO notification_deliveries (notification_id, user_id, type, channel, address)
    SELECT b.id, b.user_id, b.type, p.channel, p.address
      FROM batch b JOIN notification_prefs p ON p.user_id = b.user_id AND p.is_enabled
    UNION ALL
    SELECT b.id, b.user_id, b.type, 'EMAIL', u.email
      FROM batch b JOIN users u ON u.id = b.user_id
     WHERE NOT EXISTS (SELECT 1 FROM notification_prefs p WHERE p.user_id = b.user_id AND p.channel = 'EMAIL')
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), sent AS (
    UPDATE notifications n SET status = 'SENT' FROM batch b WHERE n.id = b.id RETURNING 1
  )
  SELECT (SELECT count(*) FROM sent)::int AS notifications, (SELECT count(*) FROM routed)::int AS deliveries`;

/** The notifications (inbox), the channel preferences, and the statements that produce and route notifications. */
@Injectable()
export class NotificationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
  async markRead(userId: string, id: string): Promise<string | null> {
    const marked = await one<{ id: string }>(
      this.dataSource,
      `WITH marked AS (
         UPDATE notifications SET read_at = coalesce(read_at, CURRENT_TIMESTAMP(3))
          WHERE id = $1 AND user_id = $2 AND status = 'SENT'
          RETURNING id)
       SELECT id FROM marked`,
      [id, userId],
    );
    return marked?.id ?? null;
  }

  /** Answers how many notifications it marked. */
  async markAllRead(userId: string): Promise<number> {
    const row = await one<{ updated: number }>(
      this.dataSource,
      `WITH marked AS (
         UPDATE notifications SET read_at = CURRENT_TIMESTAMP(3)
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
  async upsertPref(userId: string, pref: NewPref): Promise<PrefRow> {
    const row = await one<PrefRow>(
      this.dataSource,
      `INSERT INTO notification_prefs (id, user_id, channel, address, is_enabled, secret)
       VALUES (COALESCE($6::uuid, gen_random_uuid()), $1, $2, $3, $4, $5)
       ON CONFLICT (user_id, channel)
       DO UPDATE SET address = EXCLUDED.address, is_enabled = EXCLUDED.is_enabled, updated_at = CURRENT_TIMESTAMP(3)
       RETURNING ${PREF_COLUMNS}`,
      [userId, pref.channel, pref.address, pref.isEnabled, pref.secret, pref.id],
    );
    return row!;
  }

  /** One batch of TASK_PUBLISHED fan-out (see publishSql). */
  async publishBatch(scope: PublicationScope): Promise<ProductionBatch> {
    return (await one<ProductionBatch>(this.dataSource, PUBLISH_SQL[scope]))!;
  }

  /** One batch of TASK_DUE_REMINDER fan-out for reminders `hours` before the due time (see REMIND_SQL). */
  async remindBatch(hours: number[]): Promise<ProductionBatch> {
    return (await one<ProductionBatch>(this.dataSource, REMIND_SQL, [hours, Math.max(...hours)]))!;
  }

  /** One batch of reminders at extended deadlines (see REMIND_EXTENDED_SQL). */
  async remindExtendedBatch(hours: number[]): Promise<ProductionBatch> {
    return (await one<ProductionBatch>(this.dataSource, REMIND_EXTENDED_SQL, [hours, Math.max(...hours)]))!;
  }

  /** TASK_EXTENDED for the member's extension, in the transaction of `db` (see EXTENDED_SQL). */
  async produceExtended(db: Db, taskId: string, userId: string): Promise<void> {
    await rows(db, EXTENDED_SQL, [taskId, userId]);
  }

  /** TASK_COMMENT notifications of a new comment, in the transaction of `db`; answers how many. */
  commentPosted(db: Db, commentId: string): Promise<number> {
    return affected(db, COMMENT_SQL, [commentId]);
  }

  /** GRADE_RELEASED for the released submissions `submissionIds`, in the transaction of `db` (see GRADE_RELEASED_SQL). */
  async produceGradeReleased(db: Db, submissionIds: string[]): Promise<void> {
    await rows(db, GRADE_RELEASED_SQL, [submissionIds]);
  }

  /** Routes one batch of PENDING notifications (see DISPATCH_SQL). */
  async dispatchBatch(): Promise<{ notifications: number; deliveries: number }> {
    return (await one<{ notifications: number; deliveries: number }>(this.dataSource, DISPATCH_SQL))!;
  }
}
