import busboy from 'busboy';
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import type { Request } from 'express';
import { AppError } from '../common/errors/app-error';
import stableStringify from 'safe-stable-stringify';

/**
 * Bounds of a multipart body read only for its fingerprint: an upload takes one file part (`@FileUpload()`,
 * which refuses text fields), so a repeat beyond these is not the request it repeats: refused unread.
 */
const MAX_FILE_PARTS = 1;
const MAX_FIELDS = 16;
const MAX_FIELD_BYTES = 64 * 1024;

/** One file part of a multipart request, as the fingerprint sees it. */
export interface FilePart {
  field: string;
  name: string;
  mimeType: string;
  sha256: string;
}

/**
 * The key of the fingerprints, derived from the JWT secret (HKDF-SHA-256, its own `info`, so it is no token
 * key): a fingerprint read from the database tells nothing about the body it stands for (a password change's
 * passwords, say), even to someone who guesses candidate bodies. A new JWT secret makes the keys kept before
 * it answer 422 to a repeat: nothing runs twice.
 */
export const fingerprintKey = (jwtSecret: string): Buffer =>
  Buffer.from(hkdfSync('sha256', jwtSecret, '', 'idempotency-key request fingerprint', 32));

/** HMAC-SHA-256 hex of the value as JSON with sorted keys. */
const hashOf = (key: Buffer, value: unknown): string =>
  createHmac('sha256', key)
    .update(stableStringify(value) ?? 'null')
    .digest('hex');

/** A JSON (or empty) body: key order does not matter, so a client that rebuilds the same object matches. */
export const jsonFingerprint = (key: Buffer, body: unknown): string => hashOf(key, body ?? null);

/** A multipart body: its text fields and, per file part, field, file name, media type and content hash. */
export const multipartFingerprint = (key: Buffer, fields: [string, string][], files: FilePart[]): string =>
  hashOf(key, { fields: [...fields].sort(), files: [...files].sort(byField) });

const byField = (a: FilePart, b: FilePart): number =>
  a.field.localeCompare(b.field) || a.sha256.localeCompare(b.sha256);

/**
 * The multipart fingerprint of a request whose body nobody has read yet (a repeat that will not run): the
 * parts are hashed as they stream by and nothing is kept. Names are read as multer reads them for the upload
 * routes (UTF-8 parameters, the three escapes of HTML forms undone), so a repeat of an upload matches it.
 */
export function readMultipartFingerprint(
  key: Buffer,
  request: Request,
  maxFileBytes: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const fields: [string, string][] = [];
    const files: Promise<FilePart>[] = [];
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      request.unpipe(parser);
      parser.destroy();
      reject(error);
    };
    const parser = busboy({
      headers: request.headers,
      defParamCharset: 'utf8',
      limits: {
        fileSize: maxFileBytes + 1,
        files: MAX_FILE_PARTS,
        fields: MAX_FIELDS,
        fieldSize: MAX_FIELD_BYTES,
      },
    });
    const tooMany = () => fail(AppError.validation('The multipart body has more parts than an upload takes'));
    parser.on('filesLimit', tooMany);
    parser.on('fieldsLimit', tooMany);
    parser.on('field', (name, value) => fields.push([decodeFormDataName(name), value]));
    parser.on('file', (field, stream, info) => {
      const hash = createHash('sha256');
      stream.on('data', (chunk: Buffer) => hash.update(chunk));
      stream.on('error', fail);
      files.push(
        new Promise((done) =>
          stream.on('end', () =>
            done({
              field: decodeFormDataName(field),
              name: decodeFormDataName(info.filename ?? ''),
              mimeType: info.mimeType,
              sha256: hash.digest('hex'),
            }),
          ),
        ),
      );
    });
    parser.on('error', fail);
    parser.on('close', () => {
      Promise.all(files).then((parts) => {
        if (settled) return;
        settled = true;
        resolve(multipartFingerprint(key, fields, parts));
      }, fail);
    });
    // A client that leaves mid-body never ends the parser: its file parts would wait forever.
    request.on('close', () => {
      if (!request.complete) fail(AppError.validation('The request body ended early'));
    });
    request.pipe(parser);
  });
}

/** HTML forms escape LF, CR and `"` in names as %0A, %0D and %22; multer undoes exactly these. */
function decodeFormDataName(name: string): string {
  return name.replace(/%0A|%0D|%22/gi, (match) => ({ '%0A': '\n', '%0D': '\r' })[match.toUpperCase()] ?? '"');
}
