import busboy from 'busboy';
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import type { Request } from 'express';
import stableStringify from 'safe-stable-stringify';

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
    const parser = busboy({
      headers: request.headers,
      defParamCharset: 'utf8',
      limits: { fileSize: maxFileBytes + 1 },
    });
    parser.on('field', (name, value) => fields.push([decodeFormDataName(name), value]));
    parser.on('file', (field, stream, info) => {
      const hash = createHash('sha256');
      stream.on('data', (chunk: Buffer) => hash.update(chunk));
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
    parser.on('error', reject);
    parser.on('close', () => {
      Promise.all(files).then((parts) => resolve(multipartFingerprint(key, fields, parts)), reject);
    });
    request.pipe(parser);
  });
}

/** HTML forms escape LF, CR and `"` in names as %0A, %0D and %22; multer undoes exactly these. */
function decodeFormDataName(name: string): string {
  return name.replace(/%0A|%0D|%22/gi, (match) => ({ '%0A': '\n', '%0D': '\r' })[match.toUpperCase()] ?? '"');
}
