import { readdirSync } from 'node:fs';
import { FileStorage } from '../../src/files/file-storage';
import { join } from 'node:path';
import type request from 'supertest';
import { TestApp } from './test-app';
import { TestUser } from './users';

/** TaskAttachment and SubmissionAttachment as the API answers them: one shape. */
export interface AttachmentJson {
  id: string;
  fileKey: string;
  originalName: string;
  mimeType: string | null;
  sizeBytes: number | null;
  url: string;
  createdAt: string;
}

export interface UploadedFile {
  name: string;
  content: Buffer | string;
  contentType?: string;
}

/** Uploads `file` as the multipart field `file` to `path`, asserting 201; answers the attachment. */
export async function uploadAttachment(
  ctx: TestApp,
  path: string,
  user: TestUser,
  file: UploadedFile,
  defaultContentType: string,
): Promise<AttachmentJson> {
  const res = await ctx.http
    .post(path)
    .set('Authorization', user.auth)
    .attach('file', Buffer.from(file.content), {
      filename: file.name,
      contentType: file.contentType ?? defaultContentType,
    });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as AttachmentJson;
}

/** Keys of every file in the test app's storage (`<DATA_DIR>/files/<prefix>/<key>`). */
export function storedFileKeys(ctx: TestApp): string[] {
  const root = join(ctx.dataDir, 'files');
  let folders: string[];
  try {
    folders = readdirSync(root);
  } catch {
    return [];
  }
  return folders.flatMap((folder) => readdirSync(join(root, folder)));
}

/** Keys of every stored file, whichever the driver (local disk or S3 bucket). */
export async function listStoredKeys(ctx: TestApp): Promise<string[]> {
  const objects = await ctx.app.get(FileStorage).list(undefined, 10_000);
  return objects.map((object) => object.key);
}

/** GET of a file URL by `user`, its body read whole as bytes (`body` is a Buffer). */
export const downloadFile = (ctx: TestApp, url: string, user: TestUser): request.Test =>
  ctx.http.get(url).set('Authorization', user.auth).buffer(true).responseType('blob');
