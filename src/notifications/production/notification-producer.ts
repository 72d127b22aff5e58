import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { memberSeesTaskSql } from '../../access/task-rules.sql';
import { AppConfig } from '../../config/config';
import { InjectConfig } from '../../config/config.module';

/** Tasks claimed per statement: each one fans out to its whole class. */
const TASKS_PER_BATCH = 20;

/** A task members can see: published, not deleted, started (the access rule). Alias `t` = tasks. */
const VISIBLE_TASK = `${memberSeesTaskSql('t')} AND t.deleted_at IS NULL`;

/** The recipients of a task's event: active members of its class at this moment. Needs `claimed.task_id`. */
const RECIPIENTS = `
  FROM claimed
  JOIN tasks t ON t.id = claimed.task_id
  JOIN classes c ON c.id = t.class_id
  JOIN class_members m ON m.class_id = t.class_id
  JOIN users u ON u.id = m.user_id AND u.is_active`;

/** The due time in the recipient's time zone (alias `u` = users), e.g. `Tue 03 Mar 2026 17:30 (Asia/Shanghai)`. */
const LOCAL_DUE = `notification_local_time(t.due_at, u.timezone)`;

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
    where: `greatest(t.published_at, t.start_at) > now() - interval '1 hour'`,
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
                  CASE WHEN t.due_at IS NULL THEN 'It has no due date.' ELSE 'Due ' || ${LOCAL_DUE} || '.' END)
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
 * Reminders: of the offsets whose moment (dueAt − h) has come, the smallest one, so a task published close to
 * its due time gets one reminder rather than one per missed offset. A moved dueAt is a new key.
 */
const REMIND_SQL = `
  WITH claimed AS (
    INSERT INTO notification_task_reminders (task_id, hours_before, due_at)
    SELECT t.id, o.hours, t.due_at
      FROM tasks t
      CROSS JOIN LATERAL (
        SELECT min(h) AS hours FROM unnest($1::float8[]) AS h WHERE t.due_at - h * interval '1 hour' <= now()
      ) o
     WHERE ${VISIBLE_TASK}
       AND t.due_at > now() AND t.due_at <= now() + $2::float8 * interval '1 hour'
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
           claimed.hours_before,
           format('Reminder: %s is due %s', t.title, ${LOCAL_DUE}),
           format('"%s" in %s is due %s, and you have not submitted it yet.', t.title, c.name, ${LOCAL_DUE})
    ${RECIPIENTS}
     WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.task_id = t.id AND s.user_id = m.user_id)
    ON CONFLICT DO NOTHING
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM claimed)::int AS tasks, (SELECT count(*) FROM produced)::int AS notifications`;

interface BatchResult {
  tasks: number;
  notifications: number;
}

/** Finds due events in the database and produces their notifications (PENDING until dispatched). */
@Injectable()
export class NotificationProducer {
  private readonly logger = new Logger(NotificationProducer.name);

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** TASK_PUBLISHED for every task (of `scope`) that has become visible and was not announced yet. */
  publishDue(scope: PublicationScope): Promise<number> {
    return this.drain('TASK_PUBLISHED', PUBLISH_SQL[scope], []);
  }

  /** TASK_DUE_REMINDER for every task whose reminder moment has come. */
  remindDue(): Promise<number> {
    const hours = this.config.notifications.reminderHoursBeforeDue;
    return this.drain('TASK_DUE_REMINDER', REMIND_SQL, [hours, Math.max(...hours)]);
  }

  private async drain(type: string, sql: string, params: unknown[]): Promise<number> {
    let produced = 0;
    for (;;) {
      const [batch]: BatchResult[] = await this.dataSource.query(sql, params);
      produced += batch.notifications;
      if (batch.tasks > 0)
        this.logger.log(`${type}: ${batch.notifications} notifications for ${batch.tasks} tasks`);
      if (batch.tasks < TASKS_PER_BATCH) return produced;
    }
  }
}
