import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/utils/uuid';
import { AccessService } from './access.service';
import { RequestWithAccess, ROUTE_ACCESS, RouteAccessRule } from './route-access';

/**
 * The guard of `@TaskRoute(...)`: `AccessService.requireTaskAccess` for `:taskId`, resolved once onto the
 * request. Guards run before interceptors and pipes, so the caller is refused (404/403) before multer stores a
 * single byte of an upload and before a body is validated.
 */
@Injectable()
export class TaskAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<RouteAccessRule>(ROUTE_ACCESS, context.getHandler());
    const request = context.switchToHttp().getRequest<RequestWithAccess>();
    const taskId = request.params.taskId;
    if (!isUuid(taskId)) throw AppError.validation('taskId must be a UUID');
    request.resolvedAccess = await this.access.requireTaskAccess(taskId, (request.user as AuthUser).id, {
      manage: rule.manage,
    });
    return true;
  }
}
