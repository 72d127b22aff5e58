import { roleSeesTaskSql } from '../../access/task-rules.sql';
import { ClassRole } from '../../access/class-roles';
import { NotificationTypeDefinition, notificationTypeNames } from './notification-types';

/** The subject of each event row, as SQL over the aliases of `from`. */
export type FanOutSubject =
  /** A task id: its class is the task's; MEMBERs receive it only while they can see the task. */
  | { task: string }
  | { class: string }
  /** A row of the producing module (`entity`: its id) in the class `class`. */
  | { class: string; entity: string };

/** Who receives an event: members of the subject's class, active, never the actor. */
export interface FanOutRecipients {
  /** Every member of these roles, or every member. */
  roles?: readonly ClassRole[] | 'all';
  /** SQL of one user id per event row (e.g. the submitter); received only while a member of the class. */
  user?: string;
}

/** Columns of `notifications` some types fill (SQL over the aliases of the statement); null otherwise. */
export interface FanOutColumns {
  /** Default for a task subject: the task's dueAt. */
  dueAt?: string;
  myDueAt?: string;
  hoursBefore?: string;
  commentId?: string;
}

/**
 * One kind of event of one type, as a set-based statement: every event row of `from` (after `with`) times its
 * recipients gives one notification, inserted in one statement with `ON CONFLICT DO NOTHING`, so the type's
 * unique keys (for `entity` subjects: one per type, entity and recipient) make each exactly once, whichever
 * instance or transaction runs it.
 */
export interface NotificationFanOut<Var extends string> {
  type: NotificationTypeDefinition<Var>;
  /** Common table expressions before the fan-out, e.g. a claim `claimed AS (INSERT … RETURNING …)`. */
  with?: string;
  /** The FROM items giving one row per event; parameters `$n` are the `values` of `Notifier.produce`. */
  from: string;
  subject: FanOutSubject;
  recipients: FanOutRecipients;
  /** SQL of the user who caused the event, who is never notified. */
  actor?: string;
  /** More conditions on event and recipient (aliases as in the texts). */
  where?: string;
  /** The SQL bound to the type's text variables. */
  vars: Record<Var, string>;
  columns?: FanOutColumns;
  /** SQL of a jsonb object added to the webhook `data` after the subject's fields. */
  data?: string;
  /** SQL of the events count `Notifier.produce` answers; default: the distinct subjects notified. */
  events?: string;
}

/** A fan-out compiled to its statement; made once, at load time, by `compileFanOut`. */
export interface CompiledFanOut {
  readonly type: string;
  readonly sql: string;
}

const quoted = (values: readonly string[]): string => values.map((value) => `'${value}'`).join(', ');

interface SubjectSql {
  joins: string;
  /** The class whose members receive it; the task's own column for a task (plans as good as with c.id). */
  classId: string;
  task: string;
  entity: string;
  access: string;
}

function subjectSql(subject: FanOutSubject): SubjectSql {
  if ('task' in subject) {
    return {
      joins: `JOIN tasks t ON t.id = ${subject.task}
      JOIN classes c ON c.id = t.class_id`,
      classId: 't.class_id',
      task: 't.id, t.title, t.start_at',
      entity: 'NULL::uuid',
      access: roleSeesTaskSql('t', 'm.role'),
    };
  }
  return {
    joins: `JOIN classes c ON c.id = ${subject.class}`,
    classId: 'c.id',
    task: 'NULL::uuid, NULL, NULL::timestamptz',
    entity: 'entity' in subject ? subject.entity : 'NULL::uuid',
    access: 'true',
  };
}

/**
 * The membership row `m` of each recipient and the conditions choosing them. One user per event: a lookup by
 * (class, user) kept from being flattened (`OFFSET 0`), so even without statistics it stays one index probe per
 * event instead of a walk through the class's members.
 */
function recipientsSql(
  { roles, user }: FanOutRecipients,
  classId: string,
): { join: string; where: string[] } {
  if (!roles && user) {
    return {
      join: `CROSS JOIN LATERAL (
        SELECT cm.user_id, cm.role FROM class_members cm WHERE cm.class_id = ${classId} AND cm.user_id = ${user}
        OFFSET 0) m`,
      where: [],
    };
  }
  if (!roles) throw new Error('A fan-out needs recipients: roles, a user or both');
  const join = `JOIN class_members m ON m.class_id = ${classId}`;
  if (roles === 'all') return { join, where: [] };
  const byRole = `m.role IN (${quoted(roles)})`;
  return { join, where: [user ? `(${byRole} OR m.user_id = ${user})` : byRole] };
}

/** Builds the statement of a fan-out; throws on a type not registered or of another subject. */
export function compileFanOut<Var extends string>(fanOut: NotificationFanOut<Var>): CompiledFanOut {
  const { type } = fanOut;
  if (!notificationTypeNames().includes(type.name)) throw new Error(`${type.name} is not registered`);
  const kind = 'task' in fanOut.subject ? 'task' : 'entity' in fanOut.subject ? 'entity' : 'class';
  if (kind !== type.subject) throw new Error(`${type.name} is about a ${type.subject}, not a ${kind}`);
  const subject = subjectSql(fanOut.subject);
  const columns = fanOut.columns ?? {};
  const { title, content } = type.texts(fanOut.vars);
  const recipients = recipientsSql(fanOut.recipients, subject.classId);
  const conditions = [
    ...recipients.where,
    ...(fanOut.actor ? [`m.user_id IS DISTINCT FROM ${fanOut.actor}`] : []),
    ...(fanOut.where ? [fanOut.where] : []),
  ];
  const sql = `
  WITH ${fanOut.with ? `${fanOut.with},` : ''} produced AS (
    INSERT INTO notifications (user_id, type, task_id, task_title, start_at, class_id, class_name, subject_id,
                               due_at, my_due_at, hours_before, comment_id, data, title, content)
    SELECT m.user_id, '${type.name}', ${subject.task}, c.id, c.name, ${subject.entity},
           ${columns.dueAt ?? ('task' in fanOut.subject ? 't.due_at' : 'NULL::timestamptz')},
           ${columns.myDueAt ?? 'NULL::timestamptz'}, ${columns.hoursBefore ?? 'NULL::float8'},
           ${columns.commentId ?? 'NULL::uuid'}, ${fanOut.data ?? 'NULL::jsonb'},
           ${title}, ${content}
      FROM ${fanOut.from}
      ${subject.joins}
      ${recipients.join}
      JOIN users u ON u.id = m.user_id AND u.is_active
     WHERE ${[...conditions, subject.access].join('\n       AND ')}
    ON CONFLICT DO NOTHING
    RETURNING coalesce(task_id, subject_id, class_id) AS subject
  )
  SELECT (${fanOut.events ?? 'SELECT count(DISTINCT subject) FROM produced'})::int AS events,
         (SELECT count(*) FROM produced)::int AS notifications`;
  return { type: type.name, sql };
}
