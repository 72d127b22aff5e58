import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Length, Matches } from 'class-validator';
import { PageSize } from '../../common/validation/page-size';
import { Trim } from '../../common/validation/validators';

export const COMMENT_MAX_LENGTH = 10_000;
const PAGE_SIZE_DEFAULT = 50;
const PAGE_SIZE_MAX = 100;

export class CreateCommentDto {
  @ApiProperty({
    minLength: 1,
    maxLength: COMMENT_MAX_LENGTH,
    description: 'Markdown; surrounding white space is removed, and nothing may be left empty',
  })
  @Trim()
  @IsString()
  @Length(1, COMMENT_MAX_LENGTH)
  content: string;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'A comment of the same task this one answers',
  })
  @IsOptional()
  @IsUUID('all')
  replyToId?: string | null;
}

/** Query of GET /tasks/:taskId/comments. */
export class ListCommentsQuery {
  @PageSize(PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT)
  limit: number = PAGE_SIZE_DEFAULT;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page (opaque)' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,100}$/, { message: 'cursor is malformed' })
  cursor?: string;
}

/** Who wrote a comment, as ClassMember shows a member. */
export class CommentAuthor {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, nullable: true })
  nickname: string | null;

  @ApiProperty({ description: "SHA-256 hex of the author's trimmed, lower-cased e-mail" })
  avatarHash: string;
}

/** The comment another one answers, as the web client shows it above the reply. */
export class CommentReplyTo {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ description: 'Markdown' })
  content: string;

  @ApiProperty({ type: CommentAuthor, nullable: true, description: 'null when the account no longer exists' })
  author: CommentAuthor | null;
}

/** A task comment with its author and the comment it answers. */
export class CommentResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  taskId: string;

  @ApiProperty({ description: 'Markdown' })
  content: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: CommentAuthor, nullable: true, description: 'null when the account no longer exists' })
  author: CommentAuthor | null;

  @ApiProperty({
    type: CommentReplyTo,
    nullable: true,
    description: 'The comment this one answers; null when none, or once that one is deleted',
  })
  replyTo: CommentReplyTo | null;

  @ApiProperty({ format: 'uuid', description: '`author.id`, kept for earlier clients' })
  authorId: string;

  @ApiProperty({ type: String, nullable: true, description: '`author.nickname`, kept for earlier clients' })
  nickname: string | null;

  @ApiProperty({ description: '`author.avatarHash`, kept for earlier clients' })
  avatarHash: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: '`replyTo.id`, kept for earlier clients',
  })
  replyToId: string | null;
}

export class CommentPageResponse {
  @ApiProperty({ type: [CommentResponse], description: 'Oldest first' })
  comments: CommentResponse[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Cursor of the next page; null on the last page',
  })
  nextCursor: string | null;
}
