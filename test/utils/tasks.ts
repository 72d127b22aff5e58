import { randomBytes } from 'node:crypto';
import { ClassRole } from '../../src/classes/entities/class-member.entity';
import { addMember, createClass } from './classes';
import { TestApp } from './test-app';
import { createUser, TestUser } from './users';

/** Request body of POST /classes/:classId/tasks; every field optional here (a title is generated). */
export interface TaskFields {
  title?: string;
  description?: string | null;
  startAt?: string | null;
  dueAt?: string | null;
  allowLateSubmission?: boolean;
  blockedBy?: string[];
}

export interface DraftFields extends TaskFields {
  sourceText?: string | null;
}

export interface TaskAttachmentJson {
  id: string;
  fileKey: string;
  originalName: string;
  mimeType: string | null;
  sizeBytes: number | null;
  url: string;
  createdAt: string;
}

/** TaskDetail as the API answers it (CONTRACT §2). */
export interface TaskJson {
  id: string;
  classId: string;
  className: string;
  title: string;
  startAt: string | null;
  dueAt: string | null;
  allowLateSubmission: boolean;
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
export async function uploadTaskAttachment(
  ctx: TestApp,
  taskId: string,
  user: TestUser,
  file: { name: string; content: Buffer | string; contentType?: string },
): Promise<TaskAttachmentJson> {
  const res = await ctx.http
    .post(`/tasks/${taskId}/attachments`)
    .set('Authorization', user.auth)
    .attach('file', Buffer.from(file.content), {
      filename: file.name,
      contentType: file.contentType ?? 'application/octet-stream',
    });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as TaskAttachmentJson;
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
  const [owner, admin, member, outsider] = await Promise.all([
    createUser(ctx, { timezone: timezones.owner }),
    createUser(ctx),
    createUser(ctx, { timezone: timezones.member }),
    createUser(ctx),
  ]);
  const created = await createClass(ctx, owner, { name: `Class ${randomBytes(3).toString('hex')}` });
  await addMember(ctx, created.id, admin, ClassRole.ADMIN);
  await addMember(ctx, created.id, member, ClassRole.MEMBER);
  return { classId: created.id, className: created.name, owner, admin, member, outsider };
}
