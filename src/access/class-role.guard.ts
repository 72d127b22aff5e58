import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '../common/errors/app-error';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { isUuid } from '../common/utils/uuid';
import { AccessService } from './access.service';
import { RequestWithAccess, ROUTE_ACCESS, RouteAccessRule } from './route-access';

/** The guard of `@ClassRoute(...)`: the caller's membership of `:classId`, resolved once onto the request. */
@Injectable()
export class ClassRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<RouteAccessRule>(ROUTE_ACCESS, context.getHandler());
    const request = context.switchToHttp().getRequest<RequestWithAccess>();
    const classId = request.params.classId;
    if (!isUuid(classId)) throw AppError.validation('classId must be a UUID');
    const roles = rule.roles?.length ? rule.roles : undefined;
    request.resolvedAccess = await this.access.requireClassRole(
      classId,
      (request.user as AuthUser).id,
      roles,
    );
    return true;
  }
}
