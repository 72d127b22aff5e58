import { Injectable } from '@nestjs/common';
import { TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { isUuid, sameUuid } from '../common/utils/uuid';
import { TaskNotices } from '../notifications/production/task-notices';
import { toComment } from './comments.mapper';
import { CommentPosition, CommentRow, CommentsRepository } from './comments.repository';
import { CommentPageResponse, CommentResponse, CreateCommentDto, ListCommentsQuery } from './dto/comment.dto';
import { Transactions } from '../database/transactions';

/** Microseconds since the epoch; 18 digits stay within bigint and PostgreSQL's timestamp range. */
const POSITION = /^\d{1,18}$/;

/** The cursor names a place in the list, not a comment, so deleting the last comment of a page breaks nothing. */
const encodeCursor = (row: CommentRow): string =>
  Buffer.from(`${row.position}.${row.id}`).toString('base64url');

function decodeCursor(cursor: string): CommentPosition {
  const [position, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('.');
  if (rest.length > 0 || !POSITION.test(position) || !isUuid(id)) {
    throw AppError.validation('cursor is malformed');
  }
  return { position, id };
}

/**
 * Comments on a task. Whoever can see the task (the access guard's rule) reads and writes them; the author or
 * an OWNER/ADMIN deletes one.
 */
@Injectable()
export class CommentsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly comments: CommentsRepository,
    private readonly notices: TaskNotices,
  ) {}

  /** Oldest first by (createdAt, id), keyset-paginated. */
  async list(access: TaskAccess, query: ListCommentsQuery): Promise<CommentPageResponse> {
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    // One row more than asked tells whether there is a next page.
    const found = await this.comments.page(access.taskId, after, query.limit + 1);
    const page = found.slice(0, query.limit);
    return {
      items: page.map(toComment),
      nextCursor: found.length > query.limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  /** The comment and its TASK_COMMENT notifications, in one transaction. */
  async create(access: TaskAccess, authorId: string, body: CreateCommentDto): Promise<CommentResponse> {
    const row = await this.transactions.run(async (manager) => {
      const comment = await withConstraintErrors(() =>
        this.comments.insert(manager, {
          taskId: access.taskId,
          authorId,
          replyToId: body.replyToId ?? null,
          content: body.content,
        }),
      );
      await this.notices.commentPosted(manager, comment.id);
      return comment;
    });
    return toComment(row);
  }

  /** The author or an OWNER/ADMIN (else 403); a comment of another task, or none, 404. */
  async remove(access: TaskAccess, callerId: string, commentId: string): Promise<void> {
    const outcome = await this.comments.delete(access.taskId, commentId, callerId, access.canManage);
    if (outcome.author_id === null) throw AppError.notFound('Comment');
    if (!access.canManage && !sameUuid(outcome.author_id, callerId)) {
      throw AppError.forbidden('Only the author or an OWNER/ADMIN may delete a comment');
    }
    // Allowed, yet not deleted: a concurrent request deleted it first.
    if (!outcome.deleted) throw AppError.notFound('Comment');
  }
}
