import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ClassAccess } from './access.service';
import { RequestWithClassAccess } from './class-role.guard';

/** The caller's membership resolved by `@ClassRoles(...)`. */
export const CurrentClassAccess = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ClassAccess => {
    const request = context.switchToHttp().getRequest<RequestWithClassAccess>();
    return request.classAccess as ClassAccess;
  },
);
