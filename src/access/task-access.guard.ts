import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/utils/uuid';
import { AccessService, TaskAccess } from './access.service';

const TASK_ACCESS = 'taskAccess';

interface TaskAccessOptions {
  /** OWNER or ADMIN of the task's class required. */
  manage?: boolean;
}

/**
 * On a route with a `:taskId` parameter: `AccessService.requireTaskAccess` as a guard. Guards run before
 * interceptors and pipes, so the caller is refused (404/403) before multer stores a single byte of an upload
 * and before a body is validated. The resolved access is available to the handler through
 * `@CurrentTaskAccess()`.
 */
export const RequireTaskAccess = (options: TaskAccessOptions = {}): MethodDecorator =>
  applyDecorators(SetMetadata(TASK_ACCESS, options), UseGuards(TaskAccessGuard));

interface RequestWithTaskAccess extends Request {
  taskAccess?: TaskAccess;
}

@Injectable()
export class TaskAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const options =
      this.reflector.get<TaskAccessOptions | undefined>(TASK_ACCESS, context.getHandler()) ?? {};
    const request = context.switchToHttp().getRequest<RequestWithTaskAccess>();
    const taskId = request.params.taskId;
    if (!isUuid(taskId)) throw AppError.validation('taskId must be a UUID');
    request.taskAccess = await this.access.requireTaskAccess(taskId, (request.user as AuthUser).id, options);
    return true;
  }
}

/** The caller's access to the task resolved by `@RequireTaskAccess(...)`. */
export const CurrentTaskAccess = createParamDecorator(
  (_data: unknown, context: ExecutionContext): TaskAccess => {
    const request = context.switchToHttp().getRequest<RequestWithTaskAccess>();
    return request.taskAccess as TaskAccess;
  },
);
