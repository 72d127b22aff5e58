import { randomBytes } from 'node:crypto';
import { PinoLogger } from 'nestjs-pino';
import request from 'supertest';
import { apiError as error, ISO_TIMESTAMP } from '../utils/expect';
import { downloadFile } from '../utils/files';
import { uploadSubmissionAttachment } from '../utils/submissions';
import { useTestApp } from '../utils/test-app';
import { createDraft, createTask, UNKNOWN_ID, uploadTaskAttachment } from '../utils/tasks';
import { addMember, ClassWithMembers, createClassWithMembers } from '../utils/classes';
import { createUser, TestUser } from '../utils/users';
import { sleep } from '../utils/wait';

const PUBLIC_URL = 'https://api.school.test';
const TTL_SECONDS = 1;

describe('signed file URLs: GET /files/:fileKey/url and the URL it answers', () => {
  const ctx = useTestApp({ PUBLIC_URL, FILE_URL_TTL_SECONDS: String(TTL_SECONDS) });
  let room: ClassWithMembers;
  let classmate: TestUser;

  const issue = (fileKey: string, user: TestUser | null): request.Test => {
    const req = ctx.http.get(`/files/${encodeURIComponent(fileKey)}/url`);
    return user ? req.set('Authorization', user.auth) : req;
  };
  /** The signed URL's path and query, fetched from the test server without any header. */
  const fetchSigned = (url: string): request.Test =>
    ctx.http.get(url.slice(PUBLIC_URL.length)).buffer(true).responseType('blob');
  const signedUrl = async (fileKey: string, user: TestUser): Promise<string> =>
    (await issue(fileKey, user).expect(200)).body.url;
  /** The signed URL with query parameter `name` set to `value` (null: removed). */
  const withParam = (url: string, name: string, value: string | null): string => {
    const parsed = new URL(url);
    if (value === null) parsed.searchParams.delete(name);
    else parsed.searchParams.set(name, value);
    return parsed.toString();
  };

  beforeAll(async () => {
    room = await createClassWithMembers(ctx);
    classmate = await createUser(ctx);
    await addMember(ctx, room.cls.id, classmate);
  });

  it('issues an absolute URL under PUBLIC_URL that serves the bytes without a token, with the download headers', async () => {
    const task = await createTask(ctx, room.cls.id, room.owner);
    const content = randomBytes(5000);
    const file = await uploadTaskAttachment(ctx, task.id, room.admin, {
      name: '图.png',
      content,
      contentType: 'image/png',
    });
    const before = Date.now();
    const res = await issue(file.fileKey, room.member).expect(200);
    expect(res.body).toEqual({ url: expect.any(String), expiresAt: expect.stringMatching(ISO_TIMESTAMP) });
    expect(res.body.url).toMatch(
      new RegExp(`^${PUBLIC_URL}/files/${file.fileKey}/content\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`),
    );
    const expiresAt = Date.parse(res.body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + TTL_SECONDS * 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + (TTL_SECONDS + 1) * 1000);

    const signed = await fetchSigned(res.body.url);
    const direct = await downloadFile(ctx, file.url, room.member);
    expect(signed.status).toBe(200);
    expect(Buffer.compare(signed.body as Buffer, content)).toBe(0);
    for (const header of [
      'content-type',
      'content-length',
      'content-disposition',
      'x-content-type-options',
      'cache-control',
    ]) {
      expect([header, signed.headers[header]]).toEqual([header, direct.headers[header]]);
    }
    expect(signed.headers['content-type']).toBe('image/png');
    expect(signed.headers['x-content-type-options']).toBe('nosniff');
  });

  describe('issuing follows the rules of GET /files/:fileKey', () => {
    it('task file: every member who sees the task; a non-member 403; no token 401', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner);
      const { fileKey } = await uploadTaskAttachment(ctx, task.id, room.owner, {
        name: 'a.txt',
        content: 'a',
      });
      for (const user of [room.owner, room.admin, room.member]) {
        expect((await issue(fileKey, user)).status).toBe(200);
      }
      const outsider = await issue(fileKey, room.outsider);
      expect([outsider.status, outsider.body]).toEqual([403, error('FORBIDDEN')]);
      const anonymous = await issue(fileKey, null);
      expect([anonymous.status, anonymous.body]).toEqual([401, error('UNAUTHORIZED')]);
    });

    it('draft file: OWNER and ADMIN; a MEMBER 404 as for the draft itself', async () => {
      const draft = await createDraft(ctx, room.cls.id, room.owner, { title: 'Draft' });
      const { fileKey } = await uploadTaskAttachment(ctx, draft.id, room.owner, {
        name: 'd.txt',
        content: 'd',
      });
      for (const user of [room.owner, room.admin]) {
        expect((await issue(fileKey, user)).status).toBe(200);
      }
      const member = await issue(fileKey, room.member);
      expect([member.status, member.body]).toEqual([404, error('NOT_FOUND')]);
    });

    it('submission file: its submitter, OWNER and ADMIN; another MEMBER 403, a non-member 403', async () => {
      const task = await createTask(ctx, room.cls.id, room.owner);
      const { fileKey } = await uploadSubmissionAttachment(ctx, task.id, room.member);
      for (const user of [room.member, room.owner, room.admin]) {
        expect((await issue(fileKey, user)).status).toBe(200);
      }
      for (const user of [classmate, room.outsider]) {
        const res = await issue(fileKey, user);
        expect([res.status, res.body]).toEqual([403, error('FORBIDDEN')]);
      }
    });

    it('unknown key: 404', async () => {
      const res = await issue('no-such-key', room.owner);
      expect([res.status, res.body]).toEqual([404, error('NOT_FOUND')]);
    });
  });

  describe('using it', () => {
    let task: { id: string };
    let fileKey: string;
    let otherKey: string;

    beforeAll(async () => {
      task = await createTask(ctx, room.cls.id, room.owner);
      fileKey = (await uploadTaskAttachment(ctx, task.id, room.owner, { name: 'one.txt', content: 'one' }))
        .fileKey;
      otherKey = (await uploadTaskAttachment(ctx, task.id, room.owner, { name: 'two.txt', content: 'two' }))
        .fileKey;
    });

    it('serves only the file it was issued for: another key with its signature answers 403', async () => {
      const url = await signedUrl(fileKey, room.member);
      const res = await fetchSigned(url.replace(`/files/${fileKey}/`, `/files/${otherKey}/`));
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([403, error('FORBIDDEN')]);
      expect((await fetchSigned(url)).status).toBe(200);
    });

    it('answers 403 for a tampered signature or expiry, 400 without either parameter', async () => {
      const url = await signedUrl(fileKey, room.member);
      const signature = new URL(url).searchParams.get('signature')!;
      const expires = Number(new URL(url).searchParams.get('expires'));
      const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
      for (const tampered of [
        withParam(url, 'signature', flipped),
        withParam(url, 'signature', signature.slice(1)),
        withParam(url, 'signature', ''),
        withParam(url, 'expires', String(expires + 3600)),
        withParam(url, 'expires', 'soon'),
      ]) {
        const res = await fetchSigned(tampered);
        expect([tampered, res.status, JSON.parse(res.body.toString())]).toEqual([
          tampered,
          403,
          error('FORBIDDEN'),
        ]);
      }
      for (const name of ['signature', 'expires']) {
        const res = await fetchSigned(withParam(url, name, null));
        expect([name, res.status, JSON.parse(res.body.toString())]).toEqual([
          name,
          400,
          error('VALIDATION_ERROR'),
        ]);
      }
    });

    it('stops working once expired (403)', async () => {
      const res = await issue(fileKey, room.member).expect(200);
      expect((await fetchSigned(res.body.url)).status).toBe(200);
      await sleep(Date.parse(res.body.expiresAt) - Date.now() + 50);
      const expired = await fetchSigned(res.body.url);
      expect([expired.status, JSON.parse(expired.body.toString())]).toEqual([403, error('FORBIDDEN')]);
    });

    it('answers 404 once the file is deleted', async () => {
      const attachment = await uploadTaskAttachment(ctx, task.id, room.owner, {
        name: 'x.txt',
        content: 'x',
      });
      const url = await signedUrl(attachment.fileKey, room.member);
      await ctx.http
        .delete(`/tasks/${task.id}/attachments/${attachment.id}`)
        .set('Authorization', room.owner.auth)
        .expect(204);
      const res = await fetchSigned(url);
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([404, error('NOT_FOUND')]);
    });

    it('keeps the signature out of the request log', async () => {
      const url = await signedUrl(fileKey, room.member);
      const signature = new URL(url).searchParams.get('signature')!;
      // nestjs-pino keeps one root logger per process: the one the app's request logger writes to.
      const logged = jest.spyOn(new PinoLogger({}).logger, 'info');
      try {
        await fetchSigned(url).expect(200);
        // The line is written when the response closes, just after supertest has the answer.
        for (let waited = 0; logged.mock.calls.length === 0 && waited < 2000; waited += 20) await sleep(20);
        const lines = JSON.stringify(logged.mock.calls);
        expect(lines).toContain(`/files/${fileKey}/content?expires=`);
        expect(lines).toContain('signature=[REDACTED]');
        expect(lines).not.toContain(signature);
      } finally {
        logged.mockRestore();
      }
    });
  });

  it('tells nothing about keys without a valid signature: a made-up one answers 403, not 404', async () => {
    const res = await fetchSigned(
      `${PUBLIC_URL}/files/${UNKNOWN_ID}/content?expires=9999999999&signature=${'A'.repeat(43)}`,
    );
    expect([res.status, JSON.parse(res.body.toString())]).toEqual([403, error('FORBIDDEN')]);
  });
});
