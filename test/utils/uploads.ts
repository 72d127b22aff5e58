import { randomBytes } from 'node:crypto';
import { readdirSync, utimesSync } from 'node:fs';
import { request } from 'node:http';
import { join, relative } from 'node:path';

export interface HangingUpload {
  /** Sends the rest of the file and the closing boundary; the answer's status and JSON body. */
  finish(rest: Buffer): Promise<{ status: number; body: unknown }>;
  /** Settles when the connection ends either way (a killed server errors it). */
  closed: Promise<void>;
  /** Drops the connection, so that a failed test leaves no request for the server's shutdown to wait on. */
  abort(): void;
}

/**
 * A multipart upload of one `file` part to `url` whose body stops after `first`: the server holds an upload
 * in flight until `finish` sends the rest. Chunked, so no length is announced, unless `fileBytes` is given:
 * then the request declares the length of a file of that size, as browsers do.
 */
export function startUpload(url: string, auth: string, first: Buffer, fileBytes?: number): HangingUpload {
  const boundary = `----cts${randomBytes(8).toString('hex')}`;
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
    `Content-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const req = request(url, {
    method: 'POST',
    headers: {
      Authorization: auth,
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      ...(fileBytes === undefined ? {} : { 'Content-Length': head.length + fileBytes + tail.length }),
    },
  });
  const answer = new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  const closed = answer.then(
    () => undefined,
    () => undefined,
  );
  req.write(head);
  req.write(first);
  return {
    finish(rest) {
      req.end(Buffer.concat([rest, Buffer.from(tail)]));
      return answer;
    },
    closed,
    abort: () => req.destroy(),
  };
}

/** Polls `found` every 10 ms until it answers something; fails after `timeoutMs`. */
export async function waitUntil<T>(found: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Every regular file below `root`, as paths relative to it. */
export function filesBelow(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** Sets the last write of `path` to `ageMs` ago, as if written then. */
export function backdate(path: string, ageMs: number): void {
  const at = new Date(Date.now() - ageMs);
  utimesSync(path, at, at);
}
