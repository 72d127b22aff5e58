import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Patch,
  Post,
  UploadedFile,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type TaskAccess } from '../access/access.service';
import { CurrentAccess, TaskManagerRoute, TaskRoute } from '../access/access-route.decorators';
import { ParseDraftDto } from '../ai/dto/parse-text.dto';
import { PARSE_LIMITED, ParseThrottle } from '../common/throttling/throttles';
import { DraftParseResultResponse } from '../ai/dto/parse-result.response';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { FileUpload } from '../files/file-upload.decorator';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { PublishTaskDto, UpdateTaskDto, UpdateTaskStateDto } from './dto/task-write.dto';
import {
  DraftMarkdownResponse,
  MyTaskSummaryResponse,
  TaskAttachmentResponse,
  TaskDetailResponse,
  TaskUserStateResponse,
} from './dto/task.response';
import { TaskAttachmentsService } from './task-attachments.service';
import { TaskDraftsService } from './task-drafts.service';
import { TaskReader } from './task-reader.service';
import { TasksService } from './tasks.service';
import { ApiNotModifiedResponse, IfMatch, IfMatchRoute, type IfMatchTags } from '../common/http/entity-tags';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

const TASK_ID = new ParseUUIDPipe();

@ApiTags('tasks')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Missing or invalid token' })
@Controller('tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly reader: TaskReader,
    private readonly attachments: TaskAttachmentsService,
    private readonly drafts: TaskDraftsService,
  ) {}

  // Before ':taskId', so "mine" is not read as an id.
  @Get('mine')
  @ApiNotModifiedResponse()
  @ApiOperation({
    summary: 'Tasks visible to the caller across all their classes',
    description: 'Nearest own deadline (myDueAt) first, tasks without deadline last.',
  })
  @ApiOkResponse({ type: [MyTaskSummaryResponse] })
  mine(@CurrentUser() user: AuthUser): Promise<MyTaskSummaryResponse[]> {
    return this.reader.listMine(user.id);
  }

  // The detail statement decides access (benchmarked hot path); AccessService explains a refusal.
  @Get(':taskId')
  @TaskRoute({ inStatement: true })
  @ApiNotModifiedResponse()
  @ApiOperation({ summary: 'Task detail; stats for OWNER/ADMIN only; records no view' })
  @ApiOkResponse({ type: TaskDetailResponse })
  get(@Param('taskId', TASK_ID) taskId: string, @CurrentUser() user: AuthUser): Promise<TaskDetailResponse> {
    return this.reader.get(taskId, user.id);
  }

  @Patch(':taskId')
  @TaskManagerRoute()
  @ApiNotModifiedResponse()
  @IfMatchRoute()
  @ApiOperation({ summary: 'Change a draft or a published task (OWNER/ADMIN)' })
  @ApiOkResponse({ type: TaskDetailResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'Invalid body, dueAt before startAt, invalid blockedBy',
  })
  @IdempotentWrite()
  update(
    @CurrentAccess() access: TaskAccess,
    @Body() body: UpdateTaskDto,
    @CurrentUser() user: AuthUser,
    @IfMatch() ifMatch: IfMatchTags,
  ): Promise<TaskDetailResponse> {
    return this.tasks.update(access, user.id, body, { ifMatch });
  }

  @Post(':taskId/publish')
  @TaskManagerRoute()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Publish a draft, applying the optional PATCH fields first (OWNER/ADMIN)',
    description: 'Publishing a published task publishes nothing again. Clears the cached Markdown draft.',
  })
  @ApiOkResponse({ type: TaskDetailResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'Empty title or invalid fields' })
  @IdempotentWrite()
  publish(
    @CurrentAccess() access: TaskAccess,
    @Body() body: PublishTaskDto,
    @CurrentUser() user: AuthUser,
  ): Promise<TaskDetailResponse> {
    return this.tasks.update(access, user.id, body, { publish: true });
  }

  @Delete(':taskId')
  @TaskManagerRoute()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Delete a task (OWNER/ADMIN)',
    description:
      'Hard delete without submissions; with submissions the record stays, body and attachments cleared.',
  })
  @ApiNoContentResponse()
  remove(@CurrentAccess() access: TaskAccess): Promise<void> {
    return this.tasks.remove(access);
  }

  @Post(':taskId/view')
  @TaskRoute()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Mark the task viewed by the caller; only the first call sets viewedAt' })
  @ApiNoContentResponse()
  @IdempotentWrite()
  view(@CurrentAccess() access: TaskAccess, @CurrentUser() user: AuthUser): Promise<void> {
    return this.tasks.view(access, user.id);
  }

  @Patch(':taskId/state')
  @TaskRoute()
  @ApiOperation({ summary: "Set the caller's tags and sort order of the task" })
  @ApiOkResponse({ type: TaskUserStateResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'More than 20 tags, a tag of 0 or over 32 characters, duplicates',
  })
  @IdempotentWrite()
  updateState(
    @CurrentAccess() access: TaskAccess,
    @Body() body: UpdateTaskStateDto,
    @CurrentUser() user: AuthUser,
  ): Promise<TaskUserStateResponse> {
    return this.tasks.updateState(access, user.id, body);
  }

  @Post(':taskId/attachments')
  @TaskManagerRoute()
  @FileUpload()
  @ApiOperation({ summary: 'Attach a file to the task (OWNER/ADMIN)' })
  @ApiCreatedResponse({ type: TaskAttachmentResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'No file part, file name too long, too many attachments',
  })
  @IdempotentWrite()
  addAttachment(
    @CurrentAccess() access: TaskAccess,
    @CurrentUser() user: AuthUser,
    @UploadedFile() file: UploadedFileInfo | undefined,
  ): Promise<TaskAttachmentResponse> {
    return this.attachments.add(access, user.id, file);
  }

  @Delete(':taskId/attachments/:attachmentId')
  @TaskManagerRoute({ notFound: 'NOT_FOUND: no such attachment of the task' })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove an attachment and its file (OWNER/ADMIN)' })
  @ApiNoContentResponse()
  removeAttachment(
    @CurrentAccess() access: TaskAccess,
    @Param('attachmentId', new ParseUUIDPipe()) attachmentId: string,
  ): Promise<void> {
    return this.attachments.remove(access, attachmentId);
  }

  @Post(':taskId/parse')
  @ParseThrottle()
  @TaskManagerRoute()
  @ApiTooManyRequestsResponse({ type: ErrorResponse, description: PARSE_LIMITED })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Parse a draft with its text attachments and fill it from the result (OWNER/ADMIN)',
    description:
      'Uses text, else the stored sourceText. Caches the Markdown for 3 days. A model failure answers 200 with null fields.',
  })
  @ApiOkResponse({ type: DraftParseResultResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'Task is published, or neither text nor sourceText',
  })
  @IdempotentWrite()
  parse(
    @CurrentAccess() access: TaskAccess,
    @Body() body: ParseDraftDto,
    @CurrentUser() user: AuthUser,
  ): Promise<DraftParseResultResponse> {
    return this.drafts.parse(access, user, body);
  }

  @Get(':taskId/draft-markdown')
  @TaskManagerRoute()
  @ApiOperation({
    summary: 'The cached Markdown draft of the last parse, null when none or expired (OWNER/ADMIN)',
  })
  @ApiOkResponse({ type: DraftMarkdownResponse })
  draftMarkdown(@CurrentAccess() access: TaskAccess): Promise<DraftMarkdownResponse> {
    return this.drafts.draftMarkdown(access);
  }
}
