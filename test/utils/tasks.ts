import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createClassWithMembers } from './classes';
import { AttachmentJson, uploadAttachment, UploadedFile } from './files';
import { TestApp } from './test-app';
import { TestUser } from './users';

/** A JSON timestamp as the API writes it. */
export { ISO_TIMESTAMP as ISO } from './expect';
/** A well-formed id no record has. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
/** A start time that keeps a task hidden from members. */
export const FUTURE = '2099-01-01T00:00:00.000Z';

/** Request body of POST /classes/:classId/tasks; every field optional here (a title is generated). */
export interface TaskFields {
  title?: string;
  description?: string | null;
  startAt?: string | null;
  dueAt?: string | null;
  allowLateSubmission?: boolean;
  blockedBy?: string[];
  gradeRelease?: 'IMMEDIATE' | 'MANUAL';
}

export interface DraftFields extends TaskFields {
  sourceText?: string | null;
}

export type TaskAttachmentJson = AttachmentJson;

/** TaskDetail as the API answers it. */
export interface TaskJson {
  id: string;
  classId: string;
  className: string;
  title: string;
  startAt: string | null;
  dueAt: string | null;
  myDueAt: string | null;
  hasExtension: boolean;
  allowLateSubmission: boolean;
  gradeRelease: 'IMMEDIATE' | 'MANUAL';
  hasRubric: boolean;
  maxPoints: number | null;
  blockedBy: string[];
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  submittedCount: number;
  memberCount: number;
  userState: {
    viewedAt: string | null;
    tags: string[];
    sortOrder: number | null;
    submittedAt: string | null;
  } | null;
  isPublished: boolean;
  publishedAt: string | null;
  sourceText: string | null;
  isLocked: boolean;
  description: string | null;
  attachments: TaskAttachmentJson[];
  stats: { memberCount: number; viewedCount: number; submittedCount: number } | null;
}

async function post(ctx: TestApp, path: string, user: TestUser, body: object): Promise<TaskJson> {
  const res = await ctx.http.post(path).set('Authorization', user.auth).send(body);
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as TaskJson;
}

/** Creates a published task through the API (the caller must be OWNER or ADMIN of the class). */
export function createTask(
  ctx: TestApp,
  classId: string,
  user: TestUser,
  fields: TaskFields = {},
): Promise<TaskJson> {
  const title = fields.title ?? `Task ${randomBytes(3).toString('hex')}`;
  return post(ctx, `/classes/${classId}/tasks`, user, { ...fields, title });
}

/** Creates an unpublished draft through the API (the caller must be OWNER or ADMIN of the class). */
export function createDraft(
  ctx: TestApp,
  classId: string,
  user: TestUser,
  fields: DraftFields = {},
): Promise<TaskJson> {
  return post(ctx, `/classes/${classId}/tasks/drafts`, user, fields);
}

/** Uploads one task attachment through the API; answers the TaskAttachment. */
export function uploadTaskAttachment(
  ctx: TestApp,
  taskId: string,
  user: TestUser,
  file: UploadedFile,
): Promise<TaskAttachmentJson> {
  return uploadAttachment(ctx, `/tasks/${taskId}/attachments`, user, file, 'application/octet-stream');
}

/** A shared class with one user of each role, and a user who is not a member. */
export interface ClassWithRoles {
  classId: string;
  className: string;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  outsider: TestUser;
}

export async function createClassWithRoles(
  ctx: TestApp,
  timezones: { owner?: string; member?: string } = {},
): Promise<ClassWithRoles> {
  const { cls, ...users } = await createClassWithMembers(
    ctx,
    { name: `Class ${randomBytes(3).toString('hex')}` },
    { owner: { timezone: timezones.owner }, admin: {}, member: { timezone: timezones.member }, outsider: {} },
  );
  return { classId: cls.id, className: cls.name, ...users };
}

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/**
 * Short-hands for task tests: requests as a user (null: no token), and a submission row written by SQL.
 * `app` is read at each call, so this can be set up before `createTestApp` has run.
 */
export function taskApi(app: () => TestApp) {
  const call = (method: HttpMethod, path: string, user: TestUser | null, body?: object): request.Test => {
    const req = app().http[method](path);
    if (user) req.set('Authorization', user.auth);
    return body === undefined ? req : req.send(body);
  };
  return {
    call,
    detail: async (taskId: string, user: TestUser): Promise<TaskJson> =>
      (await call('get', `/tasks/${taskId}`, user).expect(200)).body,
    listIds: async (classId: string, user: TestUser): Promise<string[]> =>
      (await call('get', `/classes/${classId}/tasks`, user).expect(200)).body.map((t: TaskJson) => t.id),
    /** Inserts the user's submission to the task; answers its firstSubmittedAt. */
    submit: async (taskId: string, user: TestUser): Promise<string> => {
      const [row] = await app().db.query(
        `INSERT INTO submissions (task_id, user_id, content) VALUES ($1, $2, 'done') RETURNING first_submitted_at`,
        [taskId, user.id],
      );
      return (row.first_submitted_at as Date).toISOString();
    },
  };
}
