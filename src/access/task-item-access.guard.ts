import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/utils/uuid';
import { AccessService, AttachmentAccess, SubmissionAccess } from './access.service';
import { RequestWithAccess, ROUTE_ACCESS, RouteAccessRule } from './route-access';

type TaskItemScope = Extract<RouteAccessRule['scope'], 'submission' | 'attachment'>;

/** The path parameter naming the item, and the access rule for it. */
const ITEM_OF_SCOPE: Record<
  TaskItemScope,
  {
    param: string;
    resolve: (
      access: AccessService,
      id: string,
      userId: string,
    ) => Promise<SubmissionAccess | AttachmentAccess>;
  }
> = {
  submission: {
    param: 'submissionId',
    resolve: (access, id, userId) => access.requireSubmissionAccess(id, userId),
  },
  attachment: {
    param: 'attachmentId',
    resolve: (access, id, userId) => access.requireAttachmentRemoval(id, userId),
  },
};

/**
 * The guard of `@SubmissionRoute()` and `@AttachmentRoute()`: routes keyed by an item of a task alone (a
 * submission, an attachment), whose task is found from the item. The access is resolved once onto the
 * request, before the body is validated, as `TaskAccessGuard` does for `:taskId`.
 */
@Injectable()
export class TaskItemAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<RouteAccessRule>(ROUTE_ACCESS, context.getHandler());
    const item = ITEM_OF_SCOPE[rule.scope as TaskItemScope];
    const request = context.switchToHttp().getRequest<RequestWithAccess>();
    const id = request.params[item.param];
    if (!isUuid(id)) throw AppError.validation(`${item.param} must be a UUID`);
    request.resolvedAccess = await item.resolve(this.access, id, (request.user as AuthUser).id);
    return true;
  }
}
