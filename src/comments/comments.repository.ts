import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ClassRole } from '../access/class-roles';
import { KeysetPlace, keysetAfterSql, keysetPositionSql } from '../common/pagination/keyset';
import { isoSql } from '../common/utils/time';
import { Db, one, rows } from '../database/sql';
import { compileFanOut } from '../notifications/production/notification-fan-out';
import { defineNotificationType } from '../notifications/production/notification-types';
import { Notifier } from '../notifications/production/notifier';

export interface CommentRow {
  id: string;
  task_id: string;
  author_id: string;
  nickname: string | null;
  /** Read only to derive the avatar hash; responses never carry it. */
  email: string;
  reply_to_id: string | null;
  /** The comment replied to: its text and author; null when there is none (or it is deleted). */
  reply_content: string | null;
  reply_author_id: string | null;
  reply_nickname: string | null;
  reply_email: string | null;
  content: string;
  created_at: string;
  /** The place in the list (see keysetPositionSql). */
  position: string;
}

/** Alias `k` = task_comments, `u` = its author; needs REPLY_JOIN. */
const COMMENT_COLUMNS = `k.id, k.task_id, k.author_id, u.nickname, u.email, k.reply_to_id, k.content,
  r.content AS reply_content, r.author_id AS reply_author_id, ru.nickname AS reply_nickname, ru.email AS reply_email,
  ${isoSql('k.created_at')} AS created_at,
  ${keysetPositionSql('k.created_at')} AS position`;

/** The comment `k` replies to (`r`) and its author (`ru`). */
const REPLY_JOIN = `LEFT JOIN task_comments r ON r.id = k.reply_to_id LEFT JOIN users ru ON ru.id = r.author_id`;

export interface DeleteOutcome {
  /** The comment's author; null when the task has no such comment. */
  author_id: string | null;
  deleted: boolean;
}

/** Longest part of a comment quoted in its notification's text. */
const COMMENT_EXCERPT_LENGTH = 200;

/**
 * A comment on a task. The text quotes the comment, white space folded, cut at COMMENT_EXCERPT_LENGTH; the
 * author of the comment replied to reads that it is a reply. Deleting the comment deletes its notifications
 * (foreign key of `comment_id`), so a removed text is neither in inboxes nor sent later.
 */
export const TASK_COMMENT = defineNotificationType({
  name: 'TASK_COMMENT',
  subject: 'task',
  texts: ({ author, excerpt, repliedTo }: Record<'author' | 'excerpt' | 'repliedTo', string>) => ({
    title: `CASE WHEN m.user_id = ${repliedTo}
                  THEN format('%s replied to your comment on %s', ${author}, t.title)
                  ELSE format('New comment on %s', t.title) END`,
    content: `format('%s commented on "%s" in %s: %s', ${author}, t.title, c.name,
                     CASE WHEN length(${excerpt}) > ${COMMENT_EXCERPT_LENGTH}
                          THEN left(${excerpt}, ${COMMENT_EXCERPT_LENGTH - 1}) || '…' ELSE ${excerpt} END)`,
  }),
});

/**
 * TASK_COMMENT for comment `$1`: to the OWNER and ADMINs of the task's class, and to the author of the comment
 * it replies to while that author can see the task; never to the comment's own author.
 */
const COMMENT_POSTED = compileFanOut({
  type: TASK_COMMENT,
  from: `task_comments k
    CROSS JOIN LATERAL (
      SELECT coalesce(a.nickname, 'A class member') AS name FROM users a WHERE a.id = k.author_id
    ) author
    CROSS JOIN LATERAL (SELECT regexp_replace(k.content, '[[:space:]]+', ' ', 'g') AS text) excerpt
    LEFT JOIN task_comments r ON r.id = k.reply_to_id`,
  subject: { task: 'k.task_id' },
  recipients: { roles: [ClassRole.OWNER, ClassRole.ADMIN], user: 'r.author_id' },
  actor: 'k.author_id',
  where: 'k.id = $1',
  columns: { commentId: 'k.id' },
  vars: { author: 'author.name', excerpt: 'excerpt.text', repliedTo: 'r.author_id' },
});

@Injectable()
export class CommentsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifier: Notifier,
  ) {}

  /** TASK_COMMENT notifications of the comment just written, in its transaction `db` (see COMMENT_POSTED). */
  async notifyPosted(db: Db, commentId: string): Promise<void> {
    await this.notifier.produce(db, COMMENT_POSTED, [commentId]);
  }

  /** `limit` comments of the task, oldest first by (created_at, id), after `after` when given. */
  page(taskId: string, after: KeysetPlace | null, limit: number): Promise<CommentRow[]> {
    return rows<CommentRow>(
      this.dataSource,
      `SELECT ${COMMENT_COLUMNS}
         FROM task_comments k JOIN users u ON u.id = k.author_id ${REPLY_JOIN}
        WHERE k.task_id = $1
              ${after ? `AND ${keysetAfterSql('k.created_at', 'k.id', 'asc', { micros: 3, id: 4 })}` : ''}
        ORDER BY k.created_at, k.id
        LIMIT $2`,
      after ? [taskId, limit, after.micros, after.id] : [taskId, limit],
    );
  }

  /** A reply to a comment of another task (or none) breaks `fk_task_comments_reply_to`. */
  async insert(
    db: Db,
    comment: { taskId: string; authorId: string; replyToId: string | null; content: string },
  ): Promise<CommentRow> {
    const row = await one<CommentRow>(
      db,
      `WITH k AS (
         INSERT INTO task_comments (task_id, author_id, reply_to_id, content) VALUES ($1, $2, $3, $4)
         RETURNING *)
       SELECT ${COMMENT_COLUMNS} FROM k JOIN users u ON u.id = k.author_id ${REPLY_JOIN}`,
      [comment.taskId, comment.authorId, comment.replyToId, comment.content],
    );
    return row!;
  }

  /**
   * Deletes the comment of the task when `anyAuthor` or the caller wrote it; answers its author (null: no such
   * comment) and whether it was deleted.
   */
  async delete(
    taskId: string,
    commentId: string,
    callerId: string,
    anyAuthor: boolean,
  ): Promise<DeleteOutcome> {
    const outcome = await one<DeleteOutcome>(
      this.dataSource,
      `WITH target AS (
         SELECT id, author_id FROM task_comments WHERE id = $1 AND task_id = $2
       ), deleted AS (
         DELETE FROM task_comments k USING target
          WHERE k.id = target.id AND (target.author_id = $3 OR $4::boolean)
         RETURNING k.id
       )
       SELECT (SELECT author_id FROM target) AS author_id, EXISTS (SELECT 1 FROM deleted) AS deleted`,
      [commentId, taskId, callerId, anyAuthor],
    );
    return outcome!;
  }
}
