import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { bearerToken } from './jwt.strategy';

/** The login token of the request, as the JWT guard (which ran before) verified it. */
export const BearerToken = createParamDecorator((_data: unknown, context: ExecutionContext): string =>
  bearerToken(context.switchToHttp().getRequest<Request>())!,
);
