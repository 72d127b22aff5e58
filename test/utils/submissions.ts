import { randomBytes } from 'node:crypto';
import { AttachmentJson, uploadAttachment, UploadedFile } from './files';
import { TestApp } from './test-app';
import { TestUser } from './users';

/** SubmissionAttachment as the API answers it. */
export type SubmissionAttachmentJson = AttachmentJson;

/** Submission as the API answers it. */
export interface SubmissionJson {
  id: string;
  taskId: string;
  userId: string;
  content: string | null;
  attachments: SubmissionAttachmentJson[];
  firstSubmittedAt: string;
  lastUpdatedAt: string;
  score: number | null;
  feedback: string | null;
  reviewerId: string | null;
  reviewedAt: string | null;
  isExemplary: boolean;
  isLate: boolean;
  releasedAt: string | null;
  rubricAssessment: { criterionId: string; levelId: string; points: number; comment: string | null }[] | null;
}

export interface SeedTaskFields {
  title?: string;
  startAt?: string | null;
  dueAt?: string | null;
  allowLateSubmission?: boolean;
  blockedBy?: string[];
  isPublished?: boolean;
}

/**
 * Inserts a task directly in the database: the submission tests need states the task API refuses or
 * cannot reach in a test's time (a due time already passed, a start in the future, any blockedBy).
 */
export async function seedTask(ctx: TestApp, classId: string, fields: SeedTaskFields = {}): Promise<string> {
  const published = fields.isPublished ?? true;
  const [row] = await ctx.db.query(
    `INSERT INTO tasks (class_id, title, start_at, due_at, allow_late_submission, blocked_by, is_published, published_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $7 THEN now() END) RETURNING id`,
    [
      classId,
      fields.title ?? `Task ${randomBytes(3).toString('hex')}`,
      fields.startAt ?? null,
      fields.dueAt ?? null,
      fields.allowLateSubmission ?? true,
      fields.blockedBy ?? [],
      published,
    ],
  );
  return row.id;
}

/** Moves the due time relative to the DATABASE clock (the clock the late rule uses). */
export async function setDue(
  ctx: TestApp,
  taskId: string,
  offset: string,
  allowLateSubmission: boolean,
): Promise<void> {
  await ctx.db.query(
    `UPDATE tasks SET due_at = now() + $2::interval, allow_late_submission = $3, start_at = NULL WHERE id = $1`,
    [taskId, offset, allowLateSubmission],
  );
}

/**
 * Adds `count` MEMBERs to a class in one statement (users named `<prefix>-<n>`, no personal class: these
 * users never call the API). Returns their ids.
 */
export async function seedMembers(
  ctx: TestApp,
  classId: string,
  count: number,
  prefix = 'seeded',
): Promise<string[]> {
  const tag = `${prefix}-${randomBytes(3).toString('hex')}`;
  const rows: { id: string }[] = await ctx.db.query(
    `WITH u AS (
       INSERT INTO users (email, password_hash, nickname)
       SELECT $2 || '-' || n || '@example.com', 'x', $2 || '-' || lpad(n::text, 6, '0') FROM generate_series(1, $3) n
       RETURNING id)
     INSERT INTO class_members (class_id, user_id, role) SELECT $1, u.id, 'MEMBER' FROM u RETURNING user_id AS id`,
    [classId, tag, count],
  );
  return rows.map((row) => row.id);
}

/** A submission (with a score) for each user, inserted directly. */
export async function seedSubmissions(ctx: TestApp, taskId: string, userIds: string[]): Promise<void> {
  await ctx.db.query(
    `INSERT INTO submissions (task_id, user_id, content, score)
     SELECT $1, id, 'seeded', 50.5 FROM unnest($2::uuid[]) AS id`,
    [taskId, userIds],
  );
}

export async function putSubmission(
  ctx: TestApp,
  taskId: string,
  user: TestUser,
  content: string | null,
): Promise<SubmissionJson> {
  const res = await ctx.http
    .put(`/tasks/${taskId}/submissions/me`)
    .set('Authorization', user.auth)
    .send({ content });
  if (res.status !== 200)
    throw new Error(`PUT submission answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as SubmissionJson;
}

/** The three writes of the user's own submission, unasserted: content, attachment upload, attachment delete. */
export function submissionWrites(ctx: TestApp, taskId: string, user: TestUser) {
  return {
    put: () =>
      ctx.http
        .put(`/tasks/${taskId}/submissions/me`)
        .set('Authorization', user.auth)
        .send({ content: 'at the bell' }),
    upload: () =>
      ctx.http
        .post(`/tasks/${taskId}/submissions/me/attachments`)
        .set('Authorization', user.auth)
        .attach('file', Buffer.from('x'), 'x.txt'),
    remove: (attachmentId: string) =>
      ctx.http
        .delete(`/tasks/${taskId}/submissions/me/attachments/${attachmentId}`)
        .set('Authorization', user.auth),
  };
}

export function uploadSubmissionAttachment(
  ctx: TestApp,
  taskId: string,
  user: TestUser,
  file: UploadedFile = { name: 'answer.txt', content: 'answer' },
): Promise<SubmissionAttachmentJson> {
  return uploadAttachment(ctx, `/tasks/${taskId}/submissions/me/attachments`, user, file, 'text/plain');
}

export { storedFileKeys } from './files';
