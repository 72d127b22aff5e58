import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type TaskAccess } from '../access/access.service';
import { CurrentAccess, TaskRoute } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { COMMENTS_PER_USER_PER_MINUTE, CommentThrottle } from '../common/throttling/throttles';
import { CommentsService } from './comments.service';
import {
  COMMENT_MAX_LENGTH,
  CommentPageResponse,
  CommentResponse,
  CreateCommentDto,
  ListCommentsQuery,
} from './dto/comment.dto';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

@ApiTags('comments')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('tasks/:taskId/comments')
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  @Get()
  @TaskRoute()
  @ApiOperation({ summary: 'Comments on the task, oldest first (anyone who can see the task)' })
  @ApiOkResponse({ type: CommentPageResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: bad limit or malformed cursor',
  })
  list(@CurrentAccess() access: TaskAccess, @Query() query: ListCommentsQuery): Promise<CommentPageResponse> {
    return this.comments.list(access, query);
  }

  @Post()
  @TaskRoute()
  @CommentThrottle()
  @ApiOperation({
    summary: 'Comment on the task (anyone who can see the task)',
    description:
      'Notifies (TASK_COMMENT) the OWNER and ADMINs of the class and the author of the comment replied to, ' +
      'never the commenter.',
  })
  @ApiCreatedResponse({ type: CommentResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: `VALIDATION_ERROR: content empty after trimming or over ${COMMENT_MAX_LENGTH} characters; replyToId not a comment of this task`,
  })
  @ApiTooManyRequestsResponse({
    type: ErrorResponse,
    description: `RATE_LIMITED: more than ${COMMENTS_PER_USER_PER_MINUTE} comments in a minute`,
  })
  @IdempotentWrite()
  create(
    @CurrentAccess() access: TaskAccess,
    @CurrentUser() user: AuthUser,
    @Body() body: CreateCommentDto,
  ): Promise<CommentResponse> {
    return this.comments.create(access, user.id, body);
  }

  @Delete(':commentId')
  @TaskRoute({
    forbidden: 'FORBIDDEN: neither the author nor an OWNER/ADMIN',
    notFound: 'NOT_FOUND: no such comment on this task',
  })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Delete a comment (its author, or an OWNER/ADMIN)' })
  @ApiParam({ name: 'commentId', format: 'uuid' })
  @ApiNoContentResponse()
  remove(
    @CurrentAccess() access: TaskAccess,
    @CurrentUser() user: AuthUser,
    @Param('commentId', new ParseUUIDPipe()) commentId: string,
  ): Promise<void> {
    return this.comments.remove(access, user.id, commentId);
  }
}
