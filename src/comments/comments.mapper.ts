import { avatarHash } from '../common/utils/avatar';
import { CommentRow } from './comments.repository';
import { CommentResponse } from './dto/comment.dto';

export function toComment(row: CommentRow): CommentResponse {
  return {
    id: row.id,
    taskId: row.task_id,
    authorId: row.author_id,
    nickname: row.nickname,
    avatarHash: avatarHash(row.email),
    content: row.content,
    replyToId: row.reply_to_id,
    createdAt: row.created_at,
  };
}
