import { Body, Controller, Get, Param, ParseUUIDPipe, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ClassManagerRoute, ClassRoute } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { CreateDraftDto, CreateTaskDto } from './dto/task-write.dto';
import { MyDraftResponse, TaskDetailResponse, TaskSummaryResponse } from './dto/task.response';
import { TaskReader } from './task-reader.service';
import { TasksService } from './tasks.service';
import { ApiNotModifiedResponse } from '../common/http/entity-tags';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

const INVALID_TASK =
  'Invalid body: title, times (dueAt before startAt), blockedBy (unknown, other class, duplicate)';

@ApiTags('tasks')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Missing or invalid token' })
@Controller('classes/:classId/tasks')
export class ClassTasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly reader: TaskReader,
  ) {}

  // Membership is checked by the list statement itself (TaskReader.listForClass): a benchmarked hot path.
  @Get()
  @ClassRoute({ inStatement: true })
  @ApiNotModifiedResponse()
  @ApiOperation({
    summary: "Published tasks of the class with the caller's state",
    description:
      'MEMBERs see started tasks; OWNER and ADMIN also scheduled ones. Nearest deadline first, no deadline last.',
  })
  @ApiOkResponse({ type: [TaskSummaryResponse] })
  list(
    @Param('classId', new ParseUUIDPipe()) classId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<TaskSummaryResponse[]> {
    return this.reader.listForClass(classId, user.id);
  }

  @Post()
  @ClassManagerRoute()
  @ApiOperation({ summary: 'Create a task, published at once (OWNER/ADMIN)' })
  @ApiCreatedResponse({ type: TaskDetailResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: INVALID_TASK })
  @IdempotentWrite()
  create(
    @Param('classId', new ParseUUIDPipe()) classId: string,
    @Body() body: CreateTaskDto,
    @CurrentUser() user: AuthUser,
  ): Promise<TaskDetailResponse> {
    return this.tasks.create(classId, user.id, body);
  }

  @Post('drafts')
  @ClassManagerRoute()
  @ApiOperation({ summary: 'Create an unpublished draft (OWNER/ADMIN); title defaults to "Untitled Draft"' })
  @ApiCreatedResponse({ type: TaskDetailResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: INVALID_TASK })
  @IdempotentWrite()
  createDraft(
    @Param('classId', new ParseUUIDPipe()) classId: string,
    @Body() body: CreateDraftDto,
    @CurrentUser() user: AuthUser,
  ): Promise<TaskDetailResponse> {
    return this.tasks.createDraft(classId, user.id, body);
  }

  @Get('drafts/mine')
  @ClassManagerRoute()
  @ApiOperation({ summary: "The caller's newest draft in the class, or null (OWNER/ADMIN)" })
  @ApiOkResponse({ type: MyDraftResponse })
  async myDraft(
    @Param('classId', new ParseUUIDPipe()) classId: string,
    @CurrentUser() user: AuthUser,
  ): Promise<MyDraftResponse> {
    return { draft: await this.reader.newestDraft(classId, user.id) };
  }
}
