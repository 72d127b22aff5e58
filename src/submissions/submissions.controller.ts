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
  Query,
  Res,
  StreamableFile,
  UploadedFile,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { type SubmissionAccess, type TaskAccess } from '../access/access.service';
import {
  CurrentAccess,
  SubmissionRoute,
  TaskManagerRoute,
  TaskRoute,
} from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { AttachmentResponse } from '../files/attachment.response';
import { FileUpload } from '../files/file-upload.decorator';
import { UploadedFileInfo } from '../files/multer-storage.engine';
import { GradeSubmissionDto, MarkExemplaryDto } from './dto/grade-submission.dto';
import { SubmissionListEntryResponse, SubmissionResponse } from './dto/submission.response';
import { UpsertSubmissionDto } from './dto/upsert-submission.dto';
import { ListVersionsQuery, ReturnSubmissionDto, SubmissionVersionsPage } from './dto/submission-history.dto';
import { SubmissionsExportService } from './submissions-export.service';
import { SubmissionsService } from './submissions.service';
import { ApiNotModifiedResponse, IfMatch, IfMatchRoute, type IfMatchTags } from '../common/http/entity-tags';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

const TASK_ID = new ParseUUIDPipe();
const NO_SUBMISSION = 'NOT_FOUND: no such submission of the task';

@ApiTags('submissions')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('tasks/:taskId/submissions')
export class SubmissionsController {
  constructor(
    private readonly submissions: SubmissionsService,
    private readonly exporter: SubmissionsExportService,
  ) {}

  @Get('me')
  @TaskRoute({ notFound: 'NOT_FOUND: no submission yet' })
  @ApiNotModifiedResponse()
  @ApiOperation({ summary: "The caller's submission" })
  @ApiOkResponse({ type: SubmissionResponse })
  getMine(@CurrentAccess() access: TaskAccess, @CurrentUser() user: AuthUser): Promise<SubmissionResponse> {
    return this.submissions.getMine(access, user.id);
  }

  // The upsert's one statement decides access (benchmarked hot path); the service judges the body.
  @Put('me')
  @TaskRoute({ inStatement: true, submissionWrite: true })
  @ApiNotModifiedResponse()
  @IfMatchRoute()
  @ApiOperation({ summary: "Create or update the caller's submission" })
  @ApiBody({ type: UpsertSubmissionDto })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: invalid body' })
  @IdempotentWrite()
  upsertMine(
    @Param('taskId', TASK_ID) taskId: string,
    @CurrentUser() user: AuthUser,
    // Typed unknown, so the global pipe leaves it to the service, after access.
    @Body() body: unknown,
    @IfMatch() ifMatch: IfMatchTags,
  ): Promise<SubmissionResponse> {
    return this.submissions.upsertMine(taskId, user.id, body, ifMatch);
  }

  @Post('me/attachments')
  @TaskRoute({ submissionWrite: true })
  @FileUpload()
  @ApiOperation({
    summary: "Upload an attachment to the caller's submission (creates the submission when none)",
  })
  @ApiCreatedResponse({ type: AttachmentResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: no file' })
  @IdempotentWrite()
  addAttachment(
    @CurrentAccess() access: TaskAccess,
    @CurrentUser() user: AuthUser,
    @UploadedFile() file: UploadedFileInfo | undefined,
  ): Promise<AttachmentResponse> {
    return this.submissions.addAttachment(access, user.id, file);
  }

  @Delete('me/attachments/:attachmentId')
  @TaskRoute({ submissionWrite: true, notFound: 'NOT_FOUND: no such attachment of the submission' })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: "Remove an attachment of the caller's submission" })
  @ApiNoContentResponse()
  removeAttachment(
    @CurrentAccess() access: TaskAccess,
    @Param('attachmentId', new ParseUUIDPipe()) attachmentId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<void> {
    return this.submissions.removeAttachment(access, user.id, attachmentId);
  }

  @Get()
  @TaskManagerRoute()
  @ApiOperation({
    summary: 'OWNER/ADMIN: one entry per class member, including those who have not submitted',
  })
  @ApiOkResponse({ type: [SubmissionListEntryResponse] })
  list(@CurrentAccess() access: TaskAccess): Promise<SubmissionListEntryResponse[]> {
    return this.submissions.list(access);
  }

  @Get('export')
  @TaskManagerRoute()
  @ApiOperation({ summary: "OWNER/ADMIN: CSV of every member's submission, times in the caller's time zone" })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'UTF-8 CSV with BOM and CRLF', schema: { type: 'string' } })
  export(
    @CurrentAccess() access: TaskAccess,
    @CurrentUser() user: AuthUser,
    @Res({ passthrough: true }) response: Response,
  ): Promise<StreamableFile> {
    return this.exporter.export(access, user, response);
  }

  @Get(':submissionId')
  @TaskManagerRoute({ notFound: NO_SUBMISSION })
  @ApiOperation({ summary: 'OWNER/ADMIN: one submission with body and attachments, for grading' })
  @ApiOkResponse({ type: SubmissionResponse })
  getOne(
    @CurrentAccess() access: TaskAccess,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
  ): Promise<SubmissionResponse> {
    return this.submissions.getOne(access, submissionId);
  }

  @Get(':submissionId/versions')
  @TaskRoute({
    forbidden: 'FORBIDDEN: a MEMBER asking for the versions of a submission of another member',
    notFound: NO_SUBMISSION,
  })
  @ApiOperation({
    summary: 'The versions of a submission, newest first: its submitter, and OWNER/ADMIN',
    description:
      'Each write by the submitter makes a version, except writes within the amend window of the current ' +
      "version's start, which amend it. Files of older versions stay readable through their url.",
  })
  @ApiOkResponse({ type: SubmissionVersionsPage })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: malformed cursor or limit' })
  versions(
    @CurrentAccess() access: TaskAccess,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
    @CurrentUser() user: AuthUser,
    @Query() query: ListVersionsQuery,
  ): Promise<SubmissionVersionsPage> {
    return this.submissions.versions(access, user.id, submissionId, query);
  }

  @Post(':submissionId/return')
  @TaskManagerRoute({ notFound: NO_SUBMISSION })
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'OWNER/ADMIN: return a submission for revision; the submitter gets SUBMISSION_RETURNED',
    description:
      'The submitter may then write it again even after the deadline or with late submission closed; their ' +
      'next write makes a new version with status RESUBMITTED, and the deadline holds again after it.',
  })
  @ApiBody({ type: ReturnSubmissionDto })
  @ApiOkResponse({ type: SubmissionResponse, description: 'The submission, status RETURNED' })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: feedback not a string of at most 10,000',
  })
  @ApiConflictResponse({ type: ErrorResponse, description: 'CONFLICT: the submission is RETURNED already' })
  @IdempotentWrite()
  returnForRevision(
    @CurrentAccess() access: TaskAccess,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
    @CurrentUser() user: AuthUser,
    @Body() body: ReturnSubmissionDto,
  ): Promise<SubmissionResponse> {
    return this.submissions.returnForRevision(access, submissionId, user.id, body);
  }

  @Patch(':submissionId/grade')
  @TaskManagerRoute({ notFound: NO_SUBMISSION })
  @ApiOperation({
    summary: 'OWNER/ADMIN: grade; sets reviewerId to the caller and reviewedAt to now',
    description:
      "`rubric` assesses with the task's rubric: one level per criterion, replacing the whole assessment " +
      "([] clears it); without `score` in the request the score becomes the sum of the levels' points. The " +
      'assessment, its score and the grade are written together.',
  })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      'VALIDATION_ERROR: no field, bad value, isExemplary without a score, or a rubric for a task without ' +
      "one, a criterion given twice, or a criterion or level that is not of the task's rubric",
  })
  @IdempotentWrite()
  grade(
    @CurrentAccess() access: TaskAccess,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
    @CurrentUser() user: AuthUser,
    @Body() body: GradeSubmissionDto,
  ): Promise<SubmissionResponse> {
    return this.submissions.grade(access, submissionId, user.id, body);
  }

  @Patch(':submissionId/exemplary')
  @TaskManagerRoute({ notFound: NO_SUBMISSION })
  @ApiOperation({
    summary: 'OWNER/ADMIN: mark or unmark an example submission; the grade, reviewerId and reviewedAt stay',
    description: 'Without a body (or with `{}`) the flag is toggled; `{isExemplary}` sets it.',
  })
  @ApiOkResponse({ type: SubmissionResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: isExemplary not a boolean, or true (set or toggled) without a score',
  })
  @IdempotentWrite()
  setExemplary(
    @CurrentAccess() access: TaskAccess,
    @Param('submissionId', new ParseUUIDPipe()) submissionId: string,
    @Body() body: MarkExemplaryDto,
  ): Promise<SubmissionResponse> {
    return this.submissions.setExemplary(access, submissionId, body.isExemplary ?? null);
  }
}

/** Submissions by their own id, for pages that know no task (the grading page). */
@ApiTags('submissions')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('submissions')
export class SubmissionByIdController {
  constructor(private readonly submissions: SubmissionsService) {}

  @Get(':submissionId')
  @SubmissionRoute()
  @ApiOperation({
    summary: 'One submission with body and attachments: the submitter their own, OWNER/ADMIN any',
    description: 'The same answer as GET /tasks/{taskId}/submissions/{submissionId}.',
  })
  @ApiOkResponse({ type: SubmissionResponse })
  get(@CurrentAccess() access: SubmissionAccess): Promise<SubmissionResponse> {
    return this.submissions.getOne(access, access.submissionId);
  }
}
