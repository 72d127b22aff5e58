import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { ApiBadRequestResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiParam } from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response';
import { AttachmentAccess, ClassAccess, SubmissionAccess, TaskAccess } from './access.service';
import { ClassRoleGuard } from './class-role.guard';
import { ClassRole, MANAGER_ROLES } from './class-roles';
import { SUBMISSION_WRITE_FORBIDDEN } from './submission-rules';
import { TaskAccessGuard } from './task-access.guard';
import { TaskItemAccessGuard } from './task-item-access.guard';
import { AccessDecider, RequestWithAccess, ROUTE_ACCESS, RouteAccessRule } from './route-access';

interface RouteDocs {
  /** Further reasons of this route for 403 / 404, besides access. */
  forbidden?: string;
  notFound?: string;
}

const FORBIDDEN_MEMBER = 'FORBIDDEN: not a member of the class';
const FORBIDDEN_MANAGER = `${FORBIDDEN_MEMBER}, or a MEMBER where OWNER/ADMIN is required`;
const FORBIDDEN_OWNER = `${FORBIDDEN_MEMBER}, or not its OWNER`;
const TASK_GONE = 'was deleted, or is not visible to a MEMBER (draft, not started)';
const TASK_NOT_FOUND = `NOT_FOUND: task does not exist, ${TASK_GONE}`;

const withReason = (base: string, extra?: string): string => (extra ? `${base}. ${extra}` : base);

/** The access answers a route can give, documented with their error codes (`ErrorCode`). */
function accessDocs(param: string | null, forbidden: string, notFound: string): MethodDecorator {
  const decorators = [
    ApiForbiddenResponse({ type: ErrorResponse, description: forbidden }),
    ApiNotFoundResponse({ type: ErrorResponse, description: notFound }),
  ];
  if (param === null) return applyDecorators(...decorators);
  return applyDecorators(
    ApiParam({ name: param, format: 'uuid' }),
    ApiBadRequestResponse({ type: ErrorResponse, description: `VALIDATION_ERROR: ${param} is not a UUID` }),
    ...decorators,
  );
}

function classForbidden(roles: readonly ClassRole[]): string {
  if (roles.length === 0) return FORBIDDEN_MEMBER;
  return roles.includes(ClassRole.ADMIN) ? FORBIDDEN_MANAGER : FORBIDDEN_OWNER;
}

interface ClassRouteOptions extends RouteDocs {
  /** The roles allowed; any member when omitted. */
  roles?: readonly ClassRole[];
  /** The route's statement decides membership (see AccessDecider); no guard. */
  inStatement?: boolean;
}

/** A route keyed by `:classId`: the caller must be a member of the class, with one of `roles` when given. */
export function ClassRoute(options: ClassRouteOptions = {}): MethodDecorator {
  const roles = options.roles ?? [];
  const decidedBy: AccessDecider = options.inStatement ? 'statement' : 'guard';
  const rule: RouteAccessRule = { scope: 'class', decidedBy, roles };
  return applyDecorators(
    SetMetadata(ROUTE_ACCESS, rule),
    ...(decidedBy === 'guard' ? [UseGuards(ClassRoleGuard)] : []),
    accessDocs(
      'classId',
      withReason(classForbidden(roles), options.forbidden),
      withReason('NOT_FOUND: class does not exist', options.notFound),
    ),
  );
}

/** OWNER and ADMIN of the class. */
export const ClassManagerRoute = (docs: RouteDocs = {}): MethodDecorator =>
  ClassRoute({ ...docs, roles: MANAGER_ROLES });

interface TaskRouteOptions extends RouteDocs {
  manage?: boolean;
  /** The route writes the caller's submission: the late and lock rules answer 403 too. */
  submissionWrite?: boolean;
  inStatement?: boolean;
}

/**
 * A route keyed by `:taskId`: AccessService.requireTaskAccess (a MEMBER sees published, started tasks; OWNER
 * and ADMIN every task of their class; `manage` requires OWNER or ADMIN).
 */
export function TaskRoute(options: TaskRouteOptions = {}): MethodDecorator {
  const decidedBy: AccessDecider = options.inStatement ? 'statement' : 'guard';
  const rule: RouteAccessRule = { scope: 'task', decidedBy, manage: options.manage ?? false };
  const forbidden = options.submissionWrite ? `${FORBIDDEN_MEMBER}. ${SUBMISSION_WRITE_FORBIDDEN}` : null;
  return applyDecorators(
    SetMetadata(ROUTE_ACCESS, rule),
    ...(decidedBy === 'guard' ? [UseGuards(TaskAccessGuard)] : []),
    accessDocs(
      'taskId',
      withReason(forbidden ?? (options.manage ? FORBIDDEN_MANAGER : FORBIDDEN_MEMBER), options.forbidden),
      withReason(TASK_NOT_FOUND, options.notFound),
    ),
  );
}

/** OWNER and ADMIN of the task's class. */
export const TaskManagerRoute = (docs: RouteDocs = {}): MethodDecorator =>
  TaskRoute({ ...docs, manage: true });

/** A route keyed by `:submissionId` alone: the submitter reads their own, OWNER and ADMIN of the class any. */
export function SubmissionRoute(docs: RouteDocs = {}): MethodDecorator {
  return taskItemRoute('submission', 'submissionId', {
    forbidden: `${FORBIDDEN_MEMBER}, or a MEMBER asking for a submission of another member`,
    notFound: `NOT_FOUND: no such submission, or its task ${TASK_GONE}`,
    ...docs,
  });
}

/**
 * A route keyed by `:attachmentId` alone, of a task or of a submission: task attachments by OWNER and ADMIN,
 * submission attachments by their submitter (the late and lock rules answer 403 too).
 */
export function AttachmentRoute(docs: RouteDocs = {}): MethodDecorator {
  return taskItemRoute('attachment', 'attachmentId', {
    forbidden:
      `${FORBIDDEN_MANAGER} (task attachment), or not the submitter (submission attachment). ` +
      SUBMISSION_WRITE_FORBIDDEN,
    notFound: `NOT_FOUND: no such attachment, or its task ${TASK_GONE}`,
    ...docs,
  });
}

function taskItemRoute(
  scope: 'submission' | 'attachment',
  param: string,
  docs: Required<RouteDocs>,
): MethodDecorator {
  const rule: RouteAccessRule = { scope, decidedBy: 'guard' };
  return applyDecorators(
    SetMetadata(ROUTE_ACCESS, rule),
    UseGuards(TaskItemAccessGuard),
    accessDocs(param, docs.forbidden, docs.notFound),
  );
}

/**
 * A route keyed by a file: the service finds what the file is attached to and asks AccessService with that
 * task's rule (task files: who sees the task; submission files: the submitter, OWNER and ADMIN).
 */
export function FileRoute(docs: RouteDocs = {}): MethodDecorator {
  const rule: RouteAccessRule = { scope: 'file', decidedBy: 'service' };
  return applyDecorators(
    SetMetadata(ROUTE_ACCESS, rule),
    accessDocs(
      null,
      withReason(FORBIDDEN_MEMBER, docs.forbidden),
      withReason(TASK_NOT_FOUND, docs.notFound ?? 'Unknown file key'),
    ),
  );
}

/**
 * The access the route's guard resolved (`ClassAccess` on class routes, `TaskAccess` on task routes,
 * `SubmissionAccess` and `AttachmentAccess` on submission and attachment routes).
 */
export const CurrentAccess = createParamDecorator(
  (
    _data: unknown,
    context: ExecutionContext,
  ): ClassAccess | TaskAccess | SubmissionAccess | AttachmentAccess => {
    const access = context.switchToHttp().getRequest<RequestWithAccess>().resolvedAccess;
    // A handler asking for it on a route whose access no guard resolved is a programming error.
    if (!access) throw new Error('No access resolved: the route has no access guard');
    return access;
  },
);
