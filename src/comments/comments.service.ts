import { Injectable } from '@nestjs/common';
import { TaskAccess } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { withConstraintErrors } from '../common/errors/constraint-errors';
import { readKeysetPage } from '../common/pagination/keyset';
import { sameUuid } from '../common/utils/uuid';
import { toComment } from './comments.mapper';
import { CommentsRepository } from './comments.repository';
import { CommentPageResponse, CommentResponse, CreateCommentDto, ListCommentsQuery } from './dto/comment.dto';
import { Transactions } from '../database/transactions';

/**
 * Comments on a task. Whoever can see the task (the access guard's rule) reads and writes them; the author or
 * an OWNER/ADMIN deletes one.
 */
@Injectable()
export class CommentsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly comments: CommentsRepository,
  ) {}

  /** Oldest first by (createdAt, id), keyset-paginated. */
  async list(access: TaskAccess, query: ListCommentsQuery): Promise<CommentPageResponse> {
    const { page, nextCursor } = await readKeysetPage(query.cursor, query.limit, (after, rows) =>
      this.comments.page(access.taskId, after, rows),
    );
    return { comments: page.map(toComment), nextCursor };
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
      await this.comments.notifyPosted(manager, comment.id);
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
