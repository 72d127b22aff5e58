import { avatarHash } from '../common/utils/avatar';
import { CommentRow } from './comments.repository';
import { CommentAuthor, CommentResponse } from './dto/comment.dto';

const toAuthor = (id: string, nickname: string | null, email: string): CommentAuthor => ({
  id,
  nickname,
  avatarHash: avatarHash(email),
});

export function toComment(row: CommentRow): CommentResponse {
  const author = toAuthor(row.author_id, row.nickname, row.email);
  return {
    id: row.id,
    taskId: row.task_id,
    content: row.content,
    createdAt: row.created_at,
    author,
    replyTo:
      row.reply_to_id === null
        ? null
        : {
            id: row.reply_to_id,
            content: row.reply_content!,
            author: toAuthor(row.reply_author_id!, row.reply_nickname, row.reply_email!),
          },
    authorId: author.id,
    nickname: author.nickname,
    avatarHash: author.avatarHash,
    replyToId: row.reply_to_id,
  };
}
