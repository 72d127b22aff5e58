import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { listedTaskSql, memberDeadlineSql } from '../access/task-rules.sql';
import { affected, Db, one, Prepared, rows } from '../database/sql';

/**
 * The deadline the feed shows: the user's own (`myDueAt`), the later of the task's dueAt and
 * the user's extension; from the lateral `deadline` (memberDeadlineSql of task `t` for the feed's user).
 */
const FEED_DEADLINE_SQL = 'deadline.due_at';
/** How far back the feed reaches. */
const FEED_HISTORY = `interval '60 days'`;
/** Events one feed holds at most, soonest deadline first from 60 days ago. */
export const MAX_FEED_EVENTS = 5000;

/** An iCalendar UTC DATE-TIME (`20260301T093000Z`) of a timestamptz expression. */
const icalTimeSql = (expression: string): string =>
  `to_char(${expression} AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS"Z"')`;

/** A task of the feed; its times are iCalendar UTC DATE-TIMEs. */
export interface FeedEventRow {
  taskId: string;
  title: string;
  className: string;
  deadline: string;
  /** The last change of what the event shows: the task, its class's name, the user's submission or extension. */
  lastModified: string;
  submitted: boolean;
}

/** The feed's owner with a row per event (and its order key); one row with taskId null when there are none. */
type FeedRow = { userId: string; sort_at: Date | null } & (
  FeedEventRow | { [K in keyof FeedEventRow]: null }
);

/**
 * The whole feed in one statement: the feed row by token hash (its active user), and every task of the
 * user's classes that the user's role lists, with a deadline from 60 days ago on. `ix_tasks_class_published_due`
 * finds each class's tasks by deadline.
 */
const FEED = new Prepared(
  'calendar.feed',
  `SELECT f.user_id AS "userId", e.*
     FROM calendar_feeds f
     JOIN users u ON u.id = f.user_id AND u.is_active
     LEFT JOIN LATERAL (
       SELECT t.id AS "taskId", t.title, c.name AS "className",
              ${icalTimeSql(FEED_DEADLINE_SQL)} AS deadline,
              ${icalTimeSql('greatest(t.updated_at, c.updated_at, s.first_submitted_at, ext.updated_at)')} AS "lastModified",
              s.id IS NOT NULL AS submitted,
              ${FEED_DEADLINE_SQL} AS sort_at
         FROM class_members m
         JOIN classes c ON c.id = m.class_id
         JOIN tasks t ON t.class_id = m.class_id
         CROSS JOIN LATERAL ${memberDeadlineSql('t', 'f.user_id')} deadline
         -- The extension's change time, for LAST-MODIFIED (memberDeadlineSql gives the deadline only).
         LEFT JOIN task_extensions ext ON ext.task_id = t.id AND ext.user_id = f.user_id
         LEFT JOIN submissions s ON s.task_id = t.id AND s.user_id = f.user_id
        WHERE m.user_id = f.user_id AND t.deleted_at IS NULL AND ${listedTaskSql('t', 'm.role')}
          AND ${FEED_DEADLINE_SQL} >= now() - ${FEED_HISTORY}
        ORDER BY sort_at, t.id
        LIMIT ${MAX_FEED_EVENTS}
     ) e ON true
    WHERE f.token_hash = $1
    ORDER BY e.sort_at, e."taskId"`,
);

/** The users' calendar feeds (token hashes) and the feed read. */
@Injectable()
export class CalendarRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Creates the user's feed or replaces its token. */
  async setToken(db: Db, userId: string, tokenHash: Buffer): Promise<void> {
    await affected(
      db,
      `INSERT INTO calendar_feeds (user_id, token_hash) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET token_hash = EXCLUDED.token_hash, updated_at = now()`,
      [userId, tokenHash],
    );
  }

  async isEnabled(userId: string): Promise<boolean> {
    return (await one(this.dataSource, `SELECT 1 FROM calendar_feeds WHERE user_id = $1`, [userId])) !== null;
  }

  async remove(userId: string): Promise<void> {
    await affected(this.dataSource, `DELETE FROM calendar_feeds WHERE user_id = $1`, [userId]);
  }

  /** The feed's events, soonest first; null for an unknown token or an inactive user. */
  async feed(tokenHash: Buffer): Promise<FeedEventRow[] | null> {
    const found = await rows<FeedRow>(this.dataSource, FEED, [tokenHash]);
    if (found.length === 0) return null;
    return found.filter((row): row is FeedRow & FeedEventRow => row.taskId !== null);
  }
}
