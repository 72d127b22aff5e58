import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppError } from '../common/errors/app-error';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { isUuid } from '../common/utils/uuid';
import { ClassRole } from './class-roles';
import { AccessService, ClassAccess } from './access.service';

const CLASS_ROLES = 'classRoles';

/**
 * On a route with a `:classId` parameter: the caller must be a member, with one of `roles` when given.
 * The resolved access is available to the handler through `@CurrentClassAccess()`.
 */
export const ClassRoles = (...roles: ClassRole[]): MethodDecorator => SetMetadata(CLASS_ROLES, roles);

export interface RequestWithClassAccess extends Request {
  classAccess?: ClassAccess;
}

@Injectable()
export class ClassRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const roles = this.reflector.get<ClassRole[] | undefined>(CLASS_ROLES, context.getHandler());
    if (roles === undefined) return true;
    const request = context.switchToHttp().getRequest<RequestWithClassAccess>();
    const classId = request.params.classId;
    if (!isUuid(classId)) throw AppError.validation('classId must be a UUID');
    const user = request.user as AuthUser;
    request.classAccess = await this.access.requireClassRole(
      classId,
      user.id,
      roles.length ? roles : undefined,
    );
    return true;
  }
}
