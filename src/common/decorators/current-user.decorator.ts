import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** The authenticated caller, as put on the request by the JWT strategy. */
export interface AuthUser {
  id: string;
  email: string;
  timezone: string;
}

export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthUser => {
  const request = context.switchToHttp().getRequest<Request>();
  return request.user as AuthUser;
});
