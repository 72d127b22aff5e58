import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Put,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type TaskAccess } from '../access/access.service';
import { CurrentAccess, TaskManagerRoute } from '../access/access-route.decorators';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ErrorResponse } from '../common/errors/error.response';
import { ExtensionResponse, PutExtensionDto } from './dto/extension.dto';
import { TaskExtensionsService } from './task-extensions.service';
import { IdempotentWrite } from '../idempotency/idempotent-write.decorator';

const memberId = (): ParameterDecorator => Param('userId', new ParseUUIDPipe());

/** Members' own deadlines; OWNER and ADMIN of the task's class, drafts and scheduled tasks too. */
@ApiTags('tasks')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponse, description: 'Missing or invalid token' })
@Controller('tasks')
export class TaskExtensionsController {
  constructor(private readonly extensions: TaskExtensionsService) {}

  @Get(':taskId/extensions')
  @TaskManagerRoute()
  @ApiOperation({ summary: "The task's extensions by nickname (OWNER/ADMIN)" })
  @ApiOkResponse({ type: [ExtensionResponse] })
  list(@CurrentAccess() access: TaskAccess): Promise<ExtensionResponse[]> {
    return this.extensions.list(access);
  }

  @Put(':taskId/extensions/:userId')
  @TaskManagerRoute({ notFound: 'NOT_FOUND: the user is not a member of the class' })
  @ApiOperation({
    summary: "Create or replace a member's own deadline (OWNER/ADMIN)",
    description:
      'TASK_EXTENDED goes to the member when the extension is new or its dueAt changed, while the task is ' +
      'visible to members.',
  })
  @ApiOkResponse({ type: ExtensionResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description: 'VALIDATION_ERROR: invalid body or userId, the task has no dueAt, dueAt not later than it',
  })
  @IdempotentWrite()
  put(
    @CurrentAccess() access: TaskAccess,
    @memberId() userId: string,
    @Body() body: PutExtensionDto,
    @CurrentUser() user: AuthUser,
  ): Promise<ExtensionResponse> {
    return this.extensions.put(access, userId, user.id, body);
  }

  @Delete(':taskId/extensions/:userId')
  @TaskManagerRoute({ notFound: 'NOT_FOUND: the user has no extension of the task' })
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: "Remove a member's extension: the task's dueAt applies again (OWNER/ADMIN)" })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'VALIDATION_ERROR: userId is not a UUID' })
  remove(@CurrentAccess() access: TaskAccess, @memberId() userId: string): Promise<void> {
    return this.extensions.remove(access, userId);
  }
}
