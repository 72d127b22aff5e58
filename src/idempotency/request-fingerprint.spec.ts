import type { Request } from 'express';
import { PassThrough } from 'node:stream';
import { fingerprintKey, readMultipartFingerprint } from './request-fingerprint';

const BOUNDARY = 'fingerprint-boundary';
const key = fingerprintKey('a test secret');

/** A request whose body the test writes: a stream with the headers and `complete` of an IncomingMessage. */
function multipartRequest(): { request: Request; body: PassThrough } {
  const body = new PassThrough();
  const request = Object.assign(body, {
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    complete: false,
  });
  return { request: request as unknown as Request, body };
}

const filePart = (name: string, content: string): string =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
  `Content-Type: text/plain\r\n\r\n${content}\r\n`;

describe('readMultipartFingerprint', () => {
  it('fingerprints one file part; the same part gives the same fingerprint', async () => {
    const read = async (): Promise<string> => {
      const { request, body } = multipartRequest();
      const fingerprint = readMultipartFingerprint(key, request, 1024);
      // Node marks a message complete once its body was received in full.
      Object.assign(request, { complete: true });
      body.end(`${filePart('a.txt', 'hello')}--${BOUNDARY}--\r\n`);
      return fingerprint;
    };
    const first = await read();
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await read()).toBe(first);
  });

  it('refuses a body with more file parts than an upload takes, without reading it to its end', async () => {
    const { request, body } = multipartRequest();
    const fingerprint = readMultipartFingerprint(key, request, 1024);
    body.write(filePart('a.txt', 'one') + filePart('b.txt', 'two'));
    await expect(fingerprint).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('settles when the client leaves mid-body', async () => {
    const { request, body } = multipartRequest();
    const fingerprint = readMultipartFingerprint(key, request, 1024);
    body.write(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\npartial`,
    );
    body.destroy();
    await expect(fingerprint).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
