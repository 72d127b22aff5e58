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
  Put,
  Res,
  StreamableFile,
  UploadedFile,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireTaskAccess } from '../access/task-access.guard';
import { AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { AttachmentResponse } from '../files/attachment.response';
import { FileUpload } from '../files/file-upload.decorator';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { GradeSubmissionDto } from './dto/grade-submission.dto';
import { SubmissionListEntryResponse, SubmissionResponse } from './dto/submission.response';
import { UpsertSubmissionDto } from './dto/upsert-submission.dto';
import { SubmissionsExportService } from './submissions-export.service';
import { SubmissionsService } from './submissions.service';

const TASK_ID = new ParseUUIDPipe();
const WRITE_RULES =
  'FORBIDDEN: not a member. LATE_SUBMISSION_CLOSED: due time passed and late submissions are off. ' +
  'TASK_LOCKED: a MEMBER has not submitted every task this one is blocked by.';

@ApiTags('submissions')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: malformed id or body' })
@ApiNotFoundResponse({
  type: ErrorResponse,
  description: 'NOT_FOUND: task (or submission / attachment) missing or not visible',
})
@Controller('tasks/:taskId/submissions')
export class SubmissionsController {
  constructor(
    private readonly submissions: SubmissionsService,
    private readonly exporter: SubmissionsExportService,
  ) {}

  @Get('me')
  @ApiOperation({ summary: "The caller's submission" })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiForbiddenResponse({ type: ErrorResponse, description: 'FORBIDDEN: not a member of the class' })
  getMine(
    @Param('taskId', TASK_ID) taskId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<SubmissionResponse> {
    return this.submissions.getMine(taskId, user.id);
  }

  // No guard: the upsert's one statement decides access (benchmarked hot path); the service judges the body.
  @Put('me')
  @ApiOperation({ summary: "Create or update the caller's submission" })
  @ApiBody({ type: UpsertSubmissionDto })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR' })
  @ApiForbiddenResponse({ type: ErrorResponse, description: WRITE_RULES })
  upsertMine(
    @Param('taskId', TASK_ID) taskId: string,
    @CurrentUser() user: AuthUser,
    // Typed unknown, so the global pipe leaves it to the service, after access.
    @Body() body: unknown,
  ): Promise<SubmissionResponse> {
    return this.submissions.upsertMine(taskId, user.id, body);
  }

  @Post('me/attachments')
  @RequireTaskAccess()
  @FileUpload()
  @ApiOperation({
    summary: "Upload an attachment to the caller's submission (creates the submission when none)",
  })
  @ApiCreatedResponse({ type: AttachmentResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: no file' })
  @ApiForbiddenResponse({ type: ErrorResponse, description: WRITE_RULES })
  addAttachment(
    @Param('taskId', TASK_ID) taskId: string,
    @CurrentUser() user: AuthUser,
    @UploadedFile() file: UploadedFileInfo | undefined,
  ): Promise<AttachmentResponse> {
    return this.submissions.addAttachment(taskId, user.id, file);
  }

  @Delete('me/attachments/:attachmentId')
  @RequireTaskAccess()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: "Remove an attachment of the caller's submission" })
  @ApiNoContentResponse()
  @ApiForbiddenResponse({ type: ErrorResponse, description: WRITE_RULES })
  removeAttachment(
    @Param('taskId', TASK_ID) taskId: string,
    @Param('attachmentId', new ParseUUIDPipe()) attachmentId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    return this.submissions.removeAttachment(taskId, user.id, attachmentId);
  }

  @Get()
  @ApiOperation({
    summary: 'OWNER/ADMIN: one entry per class member, including those who have not submitted',
  })
  @ApiOkResponse({ type: [SubmissionListEntryResponse] })
  @ApiForbiddenResponse({ type: ErrorResponse, description: 'FORBIDDEN: not OWNER or ADMIN' })
  list(
    @Param('taskId', TASK_ID) taskId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<SubmissionListEntryResponse[]> {
    return this.submissions.list(taskId, user.id);
  }

  @Get('export')
  @ApiOperation({ summary: "OWNER/ADMIN: CSV of every member's submission, times in the caller's time zone" })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'UTF-8 CSV with BOM and CRLF', schema: { type: 'string' } })
  @ApiForbiddenResponse({ type: ErrorResponse, description: 'FORBIDDEN: not OWNER or ADMIN' })
  export(
    @Param('taskId', TASK_ID) taskId: string,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile> {
    return this.exporter.export(taskId, user, response);
  }

  @Get(':submissionId')
  @RequireTaskAccess({ manage: true })
  @ApiOperation({ summary: 'OWNER/ADMIN: one submission with body and attachments, for grading' })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiForbiddenResponse({ type: ErrorResponse, description: 'FORBIDDEN: not OWNER or ADMIN' })
  getOne(
    @Param('taskId', TASK_ID) taskId: string,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<SubmissionResponse> {
    return this.submissions.getOne(taskId, submissionId, user.id);
  }

  @Patch(':submissionId/grade')
  @RequireTaskAccess({ manage: true })
  @ApiOperation({ summary: 'OWNER/ADMIN: grade; sets reviewerId to the caller and reviewedAt to now' })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: no field, bad value, or isExemplary without a score',
  })
  @ApiForbiddenResponse({ type: ErrorResponse, description: 'FORBIDDEN: not OWNER or ADMIN' })
  grade(
    @Param('taskId', TASK_ID) taskId: string,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
    @CurrentUser() user: AuthUser,
    @Body() body: GradeSubmissionDto,
  ): Promise<SubmissionResponse> {
    return this.submissions.grade(taskId, submissionId, user.id, body);
  }
}
