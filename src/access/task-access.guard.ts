import {
  applyDecorators,
  CanActivate,
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
import { AccessService } from './access.service';

const TASK_ACCESS = 'taskAccess';

interface TaskAccessOptions {
  /** OWNER or ADMIN of the task's class required. */
  manage?: boolean;
}

/**
 * On a route with a `:taskId` parameter: `AccessService.requireTaskAccess` as a guard. Guards run before
 * interceptors, so on an upload route the caller is refused (404/403) before multer stores a single byte.
 * Services still check access themselves where the answer must hold inside their transaction.
 */
export const RequireTaskAccess = (options: TaskAccessOptions = {}): MethodDecorator =>
  applyDecorators(SetMetadata(TASK_ACCESS, options), UseGuards(TaskAccessGuard));

@Injectable()
export class TaskAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const options =
      this.reflector.get<TaskAccessOptions | undefined>(TASK_ACCESS, context.getHandler()) ?? {};
    const request = context.switchToHttp().getRequest<Request>();
    const taskId = request.params.taskId;
    if (!isUuid(taskId)) throw AppError.validation('taskId must be a UUID');
    await this.access.requireTaskAccess(taskId, (request.user as AuthUser).id, options);
    return true;
  }
}
