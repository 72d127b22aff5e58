import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type TaskAccess } from '../access/access.service';
import { CurrentAccess, TaskManagerRoute, TaskRoute } from '../access/access-route.decorators';
import { ErrorResponse } from '../common/errors/error.response';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';
import { PutRubricDto, RubricResponse } from './dto/rubric.dto';
import { TaskRubricsService } from './task-rubrics.service';

const IN_USE =
  'RUBRIC_IN_USE: an assessment uses a criterion or level this would remove, or a level whose points it ' +
  'would change';

/** A task's rubric: read by whoever sees the task, written by OWNER and ADMIN (drafts too). */
@ApiTags('tasks')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'UNAUTHORIZED: missing or invalid token' })
@Controller('tasks/:taskId/rubric')
export class TaskRubricsController {
  constructor(private readonly rubrics: TaskRubricsService) {}

  @Get()
  @TaskRoute({ notFound: 'NOT_FOUND: the task has no rubric' })
  @ApiOperation({ summary: "The task's rubric, for anyone who sees the task (students before they submit)" })
  @ApiOkResponse({ type: RubricResponse })
  get(@CurrentAccess() access: TaskAccess): Promise<RubricResponse> {
    return this.rubrics.get(access);
  }

  @Put()
  @TaskManagerRoute()
  @ApiOperation({
    summary: 'Create or replace the rubric (OWNER/ADMIN)',
    description:
      'The body is the whole rubric. A criterion or level keeps its id (and its assessments) when it names ' +
      "one of this rubric's; parts without an id, or with any other id, get new server-made ids, and parts " +
      'not listed are removed. Titles and descriptions may always change; a part an assessment uses may not ' +
      'be removed, nor a used level its points.',
  })
  @ApiBody({ type: PutRubricDto })
  @ApiOkResponse({ type: RubricResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: invalid body (1–30 criteria, 1–10 levels each), or one id given twice',
  })
  @ApiConflictResponse({ type: ErrorResponse, description: IN_USE })
  @IdempotentWrite()
  put(@CurrentAccess() access: TaskAccess, @Body() body: PutRubricDto): Promise<RubricResponse> {
    return this.rubrics.put(access, body);
  }

  @Delete()
  @TaskManagerRoute({ notFound: 'NOT_FOUND: the task has no rubric' })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove the rubric (OWNER/ADMIN); not while a submission is assessed with it' })
  @ApiNoContentResponse()
  @ApiConflictResponse({ type: ErrorResponse, description: IN_USE })
  remove(@CurrentAccess() access: TaskAccess): Promise<void> {
    return this.rubrics.remove(access);
  }
}
