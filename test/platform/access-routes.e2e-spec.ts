import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { RequestMethod, Type } from '@nestjs/common';
// Nest has no public getter of a route's path, method and guards; its own packages read these keys here.
// eslint-disable-next-line no-restricted-imports
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ClassRoleGuard } from '../../src/access/class-role.guard';
import { ClassRole } from '../../src/access/class-roles';
import { ROUTE_ACCESS, RouteAccessRule } from '../../src/access/route-access';
import { TaskAccessGuard } from '../../src/access/task-access.guard';
import { TaskItemAccessGuard } from '../../src/access/task-item-access.guard';
import { IS_PUBLIC } from '../../src/common/decorators/public.decorator';
import { TICKET_AUTH } from '../../src/common/decorators/ticket-auth.decorator';
import { attachQueryCounter, QueryCounter } from '../utils/query-counter';
import { uploadSubmissionAttachment } from '../utils/submissions';
import { useTestApp } from '../utils/test-app';
import { ClassWithRoles, createClassWithRoles, createTask, uploadTaskAttachment } from '../utils/tasks';

interface Route {
  method: string;
  /** Nest form: `/tasks/:taskId`. */
  path: string;
  isPublic: boolean;
  /** `@TicketAuth()`: a stream ticket in the query stands for the bearer header. */
  ticketAuth: boolean;
  rule: RouteAccessRule | undefined;
  guards: unknown[];
}

/** Path parameters that name a resource of a class; such a route must say how its access is decided. */
const RESOURCE_PARAM = /:(classId|taskId|submissionId|attachmentId|fileKey)\b/;
/**
 * Any path parameter that names a resource by id, whatever the resource (`:announcementId`, `:prefId`, `:id`),
 * and the file key: a route with one needs an access decision, an access decorator or an exemption below.
 */
const ID_PARAM = /:([a-zA-Z]*Id|id|fileKey)\b/;

/**
 * Routes keyed by an id without an access decorator, each with the reason access is decided elsewhere. Only
 * the caller's own resources belong here: the statement that reads or writes the row filters by the
 * caller's user id, so another user's id answers 404 like an unknown one.
 */
const ACCESS_EXEMPTIONS: Record<string, string> = {
  'PATCH /users/me/notifications/:id/read':
    "the caller's own notification: NotificationsRepository.markRead matches id and user_id",
  'DELETE /users/me/notification-prefs/:prefId':
    "the caller's own preference: NotificationsRepository.deletePref matches id and user_id",
  'POST /users/me/deliveries/:deliveryId/redeliver':
    "the caller's own delivery: DeliveriesRepository.redeliver matches id and user_id",
};
/** The scope of a route is that of its first resource parameter (`/tasks/:taskId/submissions/:id`: task). */
const SCOPE_OF_PARAM: Record<string, RouteAccessRule['scope']> = {
  classId: 'class',
  taskId: 'task',
  submissionId: 'submission',
  attachmentId: 'attachment',
  fileKey: 'file',
};
const GUARD_OF_SCOPE: Partial<Record<RouteAccessRule['scope'], unknown>> = {
  class: ClassRoleGuard,
  task: TaskAccessGuard,
  submission: TaskItemAccessGuard,
  attachment: TaskItemAccessGuard,
};

const joinPath = (...parts: string[]): string =>
  '/' +
  parts
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/');

/** Every route of the running app, from the controllers Nest registered. */
function appRoutes(modules: ModulesContainer): Route[] {
  const routes: Route[] = [];
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type;
      const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        if (path === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        routes.push({
          method: method.toLowerCase(),
          path: joinPath(base, path),
          isPublic: Boolean(
            Reflect.getMetadata(IS_PUBLIC, handler) ?? Reflect.getMetadata(IS_PUBLIC, controller),
          ),
          ticketAuth: Reflect.getMetadata(TICKET_AUTH, handler) === true,
          rule: Reflect.getMetadata(ROUTE_ACCESS, handler) as RouteAccessRule | undefined,
          guards: (Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? [],
        });
      }
    }
  }
  return routes;
}

const label = (route: Route): string => `${route.method.toUpperCase()} ${route.path}`;

/**
 * The routes keyed by an id that carry no access decision: neither an access decorator (whose scope is that
 * of the first known resource parameter, when the path has one) nor an exemption with a reason. Also the
 * exemptions that name no such route (stale) or a route that has a decorator after all.
 */
function missingAccessDecisions(routes: Route[], exemptions: Record<string, string>): string[] {
  const keyed = routes.filter((route) => !route.isPublic && ID_PARAM.test(route.path));
  const offenders = keyed.flatMap((route) => {
    const known = RESOURCE_PARAM.exec(route.path)?.[1];
    const exempt = label(route) in exemptions;
    if (exempt && route.rule) return [`${label(route)}: exempted, yet has an access decorator`];
    if (exempt) return exemptions[label(route)].trim() ? [] : [`${label(route)}: exempted without a reason`];
    if (!route.rule) return [`${label(route)}: no access decision`];
    if (known && route.rule.scope !== SCOPE_OF_PARAM[known])
      return [`${label(route)}: ${route.rule.scope} decorator on a route keyed by :${known}`];
    return [];
  });
  const keyedLabels = new Set(keyed.map(label));
  const stale = Object.keys(exemptions)
    .filter((entry) => !keyedLabels.has(entry))
    .map((entry) => `${entry}: exempted, but no such route keyed by an id`);
  return [...offenders, ...stale];
}

/** The committed access rule of every route: a change to it is a permission change, reviewed as such. */
const PERMISSIONS_SNAPSHOT = resolve(__dirname, '..', '..', 'docs', 'permissions.snapshot.json');

/** A route's access rule in words: `bearer; task: OWNER or ADMIN; decided by guard`. */
function accessOf(route: Route): string {
  if (route.isPublic) return 'public';
  const auth = route.ticketAuth ? 'bearer or ?ticket=' : 'bearer';
  const rule = route.rule;
  if (!rule) return auth;
  const who = rule.roles?.length
    ? rule.roles.join(' or ')
    : rule.manage
      ? 'OWNER or ADMIN'
      : rule.scope === 'class' || rule.scope === 'task'
        ? 'any member'
        : `the ${rule.scope} rule`;
  return `${auth}; ${rule.scope}: ${who}; decided by ${rule.decidedBy}`;
}

/** Route → access rule, sorted by route, one line each. */
const permissionsOf = (routes: Route[]): Record<string, string> =>
  Object.fromEntries(
    routes.map((route) => [`${route.path} ${route.method.toUpperCase()}`, accessOf(route)] as const).sort(),
  );

describe('one access path', () => {
  const ctx = useTestApp();
  let routes: Route[];

  beforeAll(() => {
    routes = appRoutes(ctx.app.get(ModulesContainer));
  });

  describe('route decorators', () => {
    it('finds the routes of every controller', () => {
      expect(routes.length).toBeGreaterThan(50);
      expect(routes.map(label)).toEqual(
        expect.arrayContaining(['GET /tasks/:taskId', 'POST /auth/login', 'GET /files/:fileKey']),
      );
    });

    it('gives every route keyed by an id an access decision: a decorator, or an exemption with a reason', () => {
      expect(routes.filter((route) => /:[a-zA-Z]*Id\b/.test(route.path)).length).toBeGreaterThan(30);
      expect(missingAccessDecisions(routes, ACCESS_EXEMPTIONS)).toEqual([]);
    });

    it('fails a route keyed by an unknown id without a decision, and a wrong or stale exemption', () => {
      const route = (path: string, rule?: RouteAccessRule, isPublic = false): Route => ({
        method: 'get',
        path,
        isPublic,
        ticketAuth: false,
        rule,
        guards: [],
      });
      const classRule: RouteAccessRule = { scope: 'class', decidedBy: 'guard', roles: [] };
      const taskRule: RouteAccessRule = { scope: 'task', decidedBy: 'guard', manage: false };
      expect(
        missingAccessDecisions(
          [
            route('/announcements/:announcementId'),
            route('/classes/:classId/announcements/:announcementId', classRule),
            route('/classes/:classId/announcements', taskRule),
            route('/things/:id'),
            route('/users/me/things/:thingId'),
            route('/users/me/other/:otherId', classRule),
            route('/public/:announcementId', undefined, true),
            route('/tasks'),
          ],
          {
            'GET /users/me/things/:thingId': "the caller's own thing",
            'GET /users/me/other/:otherId': 'the caller’s own',
            'GET /users/me/gone/:goneId': 'route removed',
          },
        ),
      ).toEqual([
        'GET /announcements/:announcementId: no access decision',
        'GET /classes/:classId/announcements: task decorator on a route keyed by :classId',
        'GET /things/:id: no access decision',
        'GET /users/me/other/:otherId: exempted, yet has an access decorator',
        'GET /users/me/gone/:goneId: exempted, but no such route keyed by an id',
      ]);
    });

    it('gives every route keyed by a class, task or file an access decorator of that scope', () => {
      const offenders = routes
        .filter((route) => !route.isPublic && RESOURCE_PARAM.test(route.path))
        .filter((route) => route.rule?.scope !== SCOPE_OF_PARAM[RESOURCE_PARAM.exec(route.path)![1]])
        .map(label);
      expect(offenders).toEqual([]);
    });

    it('applies the scope guard wherever the guard decides, and no guard where a statement decides', () => {
      const wrong = routes
        .filter((route) => route.rule)
        .filter((route) => {
          const guard = GUARD_OF_SCOPE[route.rule!.scope];
          return route.rule!.decidedBy === 'guard' ? !route.guards.includes(guard) : route.guards.length > 0;
        })
        .map(label);
      expect(wrong).toEqual([]);
    });

    it('leaves access to the statement on the benchmarked hot paths only', () => {
      const inStatement = routes.filter((route) => route.rule?.decidedBy === 'statement').map(label);
      expect(inStatement.sort()).toEqual([
        'GET /classes/:classId/gradebook',
        'GET /classes/:classId/gradebook/me',
        'GET /classes/:classId/tasks',
        'GET /tasks/:taskId',
        'PUT /tasks/:taskId/submissions/me',
      ]);
    });
  });

  describe('OpenAPI', () => {
    type Responses = Record<string, { description?: string }>;
    let paths: Record<string, Record<string, { responses: Responses }>>;

    beforeAll(async () => {
      paths = (await ctx.http.get('/openapi.json').expect(200)).body.paths;
    });

    it("documents 403 and 404 with the API's error codes on every route with an access decorator", () => {
      const documented = routes
        .filter((route) => route.rule)
        .map((route) => {
          const responses = paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method]?.responses ?? {};
          const uuidParam = /:(classId|taskId|submissionId|attachmentId)\b/.test(route.path);
          return [
            label(route),
            responses['403']?.description?.includes('FORBIDDEN') ?? false,
            responses['404']?.description?.includes('NOT_FOUND') ?? false,
            !uuidParam || (responses['400']?.description?.includes('VALIDATION_ERROR') ?? false),
          ];
        });
      expect(documented.length).toBeGreaterThan(30);
      expect(documented.filter((entry) => entry.includes(false))).toEqual([]);
    });

    it('documents the late and lock rules on the routes that write the caller’s submission', () => {
      for (const [path, method] of [
        ['/tasks/{taskId}/submissions/me', 'put'],
        ['/tasks/{taskId}/submissions/me/attachments', 'post'],
        ['/tasks/{taskId}/submissions/me/attachments/{attachmentId}', 'delete'],
        ['/files/attachments/{attachmentId}', 'delete'],
      ]) {
        const forbidden = paths[path][method].responses['403'].description;
        expect(forbidden).toMatch(/LATE_SUBMISSION_CLOSED[\s\S]*TASK_LOCKED/);
      }
    });
  });

  describe('access is resolved once per request', () => {
    let cls: ClassWithRoles;
    let taskId: string;
    let counter: QueryCounter;
    const ACCESS_STATEMENT = /AS visible_to_members/;

    beforeAll(async () => {
      cls = await createClassWithRoles(ctx);
      taskId = (await createTask(ctx, cls.classId, cls.owner)).id;
      counter = attachQueryCounter(ctx);
    });
    afterAll(() => counter.detach());

    const accessStatements = async (work: () => Promise<unknown>): Promise<number> =>
      (await counter.record(work)).filter((statement) => ACCESS_STATEMENT.test(statement)).length;

    it('asks for task access once on the routes the guard decides, the service taking its answer', async () => {
      const file = { name: 'notes.txt', content: 'notes' };
      expect(await accessStatements(() => uploadTaskAttachment(ctx, taskId, cls.owner, file))).toBe(1);
      let attachmentId = '';
      const upload = async (): Promise<void> => {
        attachmentId = (await uploadSubmissionAttachment(ctx, taskId, cls.member)).id;
      };
      expect(await accessStatements(upload)).toBe(1);
      const remove = (): Promise<unknown> =>
        ctx.http
          .delete(`/tasks/${taskId}/submissions/me/attachments/${attachmentId}`)
          .set('Authorization', cls.member.auth)
          .expect(204);
      expect(await accessStatements(remove)).toBe(1);
      const list = (): Promise<unknown> =>
        ctx.http.get(`/tasks/${taskId}/submissions`).set('Authorization', cls.owner.auth).expect(200);
      expect(await accessStatements(list)).toBe(1);
    });

    it('asks once on the routes keyed by a submission or an attachment alone', async () => {
      const attachmentId = (await uploadSubmissionAttachment(ctx, taskId, cls.member)).id;
      const [{ id: submissionId }] = await ctx.db.query(
        `SELECT id FROM submissions WHERE task_id = $1 AND user_id = $2`,
        [taskId, cls.member.id],
      );
      const read = (): Promise<unknown> =>
        ctx.http.get(`/submissions/${submissionId}`).set('Authorization', cls.member.auth).expect(200);
      expect(await accessStatements(read)).toBe(1);
      const remove = (): Promise<unknown> =>
        ctx.http
          .delete(`/files/attachments/${attachmentId}`)
          .set('Authorization', cls.member.auth)
          .expect(204);
      expect(await accessStatements(remove)).toBe(1);
    });

    it('keeps GET /tasks/:taskId at one statement (access folded into it)', async () => {
      const get = (): Promise<unknown> =>
        ctx.http.get(`/tasks/${taskId}`).set('Authorization', cls.member.auth).expect(200);
      await get(); // warms the token-user cache
      expect(await counter.record(get)).toHaveLength(1);
    });
  });

  describe('the late and lock rules', () => {
    const SRC = resolve(__dirname, '..', '..', 'src');
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? sources(join(dir, entry.name))
          : entry.name.endsWith('.ts')
            ? [join(dir, entry.name)]
            : [],
      );
    const filesMatching = (pattern: RegExp): string[] =>
      sources(SRC)
        .filter((file) => pattern.test(readFileSync(file, 'utf8')))
        .map((file) => relative(SRC, file));

    it('are written once: one SQL fragment and one function answering their errors', () => {
      expect(filesMatching(/NOT \$\{\w+\}\.allow_late|NOT \w+\.allow_late/)).toEqual([
        'access/task-rules.sql.ts',
      ]);
      expect(filesMatching(/blockedForUserSql\(/)).toEqual(['access/task-rules.sql.ts']);
      expect(filesMatching(/new AppError\(\s*ErrorCode\.(LATE_SUBMISSION_CLOSED|TASK_LOCKED)\b/)).toEqual([
        'access/submission-rules.ts',
      ]);
    });
  });

  describe('the permissions snapshot (docs/permissions.snapshot.json)', () => {
    it('is the access rule of every route; `npm run permissions:update` rewrites it after a reviewed change', () => {
      const current = permissionsOf(routes);
      if (process.env.UPDATE_PERMISSIONS_SNAPSHOT === '1') {
        writeFileSync(PERMISSIONS_SNAPSHOT, JSON.stringify(current, null, 2) + '\n');
      }
      const committed = JSON.parse(readFileSync(PERMISSIONS_SNAPSHOT, 'utf8')) as Record<string, string>;
      expect(current).toEqual(committed);
    });

    it('words every kind of rule', () => {
      const route = (isPublic: boolean, ticketAuth: boolean, rule?: RouteAccessRule): Route => ({
        method: 'get',
        path: '/x',
        isPublic,
        ticketAuth,
        rule,
        guards: [],
      });
      expect(
        [
          route(true, false),
          route(false, false),
          route(false, true),
          route(false, false, { scope: 'class', decidedBy: 'guard', roles: [] }),
          route(false, false, { scope: 'class', decidedBy: 'guard', roles: [ClassRole.OWNER] }),
          route(false, false, { scope: 'task', decidedBy: 'statement', manage: false }),
          route(false, false, { scope: 'task', decidedBy: 'guard', manage: true }),
          route(false, false, { scope: 'file', decidedBy: 'service' }),
        ].map(accessOf),
      ).toEqual([
        'public',
        'bearer',
        'bearer or ?ticket=',
        'bearer; class: any member; decided by guard',
        'bearer; class: OWNER; decided by guard',
        'bearer; task: any member; decided by statement',
        'bearer; task: OWNER or ADMIN; decided by guard',
        'bearer; file: the file rule; decided by service',
      ]);
    });
  });
});
