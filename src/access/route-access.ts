import type { Request } from 'express';
import { AttachmentAccess, ClassAccess, SubmissionAccess, TaskAccess } from './access.service';
import { ClassRole } from './class-roles';

/** Metadata key of every access decorator; test/platform/access-routes.e2e-spec.ts requires a decision on routes keyed by an id. */
export const ROUTE_ACCESS = 'routeAccess';

/**
 * Who decides the route's access. `guard`: the route's guard, once, before pipes and interceptors (so before a
 * body is validated or an upload stored); the handler receives the result through `@CurrentAccess()`.
 * `statement`: the route's one SQL statement decides (benchmarked hot paths); AccessService explains a refusal.
 * `service`: the resource is known only after a lookup by the service (a file key names its task).
 */
export type AccessDecider = 'guard' | 'statement' | 'service';

export interface RouteAccessRule {
  scope: 'class' | 'task' | 'submission' | 'attachment' | 'file';
  decidedBy: AccessDecider;
  /** Class routes: the roles allowed (any member when empty). */
  roles?: readonly ClassRole[];
  /** Task routes: OWNER or ADMIN of the task's class required. */
  manage?: boolean;
}

export interface RequestWithAccess extends Request {
  resolvedAccess?: ClassAccess | TaskAccess | SubmissionAccess | AttachmentAccess;
}
