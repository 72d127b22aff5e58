import { readdirSync, statSync } from 'node:fs';
import { AddressInfo, connect, Socket } from 'node:net';
import { join } from 'node:path';
import { PinoLogger } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { waitFor } from '../utils/notifications';
import { createClassWithRoles, createTask } from '../utils/tasks';
import { createTestApp, TestApp } from '../utils/test-app';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1000;
/** Far below Node's 5 s, so that a close after it is the configuration's doing. */
const KEEP_ALIVE_TIMEOUT_MS = 300;

interface LogCall {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: unknown;
}

/** Splits a raw HTTP answer into its status line, headers (lower-case names) and body. */
function parseAnswer(raw: string): { status: string; headers: Record<string, string>; body: string } {
  const [head, body] = raw.split('\r\n\r\n');
  const [status, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status, headers, body };
}

/** Slow clients get 408 `{error, code}` with X-Request-Id; clients that give up are logged at info. */
describe('platform: slow and vanishing clients', () => {
  let ctx: TestApp;
  let port: number;
  let logs: LogCall[];
  beforeAll(async () => {
    ctx = await createTestApp({
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    });
    const server = ctx.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => ctx.close());

  // Every line of the process's one pino logger: request lines, and the exception filter's through Nest.
  beforeEach(() => {
    logs = [];
    const root = new PinoLogger({}).logger as Pino;
    for (const level of ['info', 'warn', 'error'] as const) {
      jest.spyOn(root, level).mockImplementation(((fields: Record<string, unknown>, message: unknown) => {
        logs.push({ level, fields, message });
      }) as never);
    }
  });
  afterEach(() => jest.restoreAllMocks());

  /** Sends `data` on a fresh connection and collects what comes back until the server closes it. */
  function exchange(data: string): Promise<{ raw: string; ms: number }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1', () => socket.write(data));
      let raw = '';
      socket.on('data', (chunk) => (raw += chunk.toString()));
      socket.on('close', () => resolve({ raw, ms: Date.now() - started }));
      socket.on('error', reject);
    });
  }

  const linesOf = (id: string) => logs.filter((line) => (line.fields?.req as { id?: string })?.id === id);

  it('closes an idle keep-alive connection after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const { raw, ms } = await exchange('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(parseAnswer(raw).status).toBe('HTTP/1.1 200 OK');
    expect(parseAnswer(raw).headers['keep-alive']).toBe('timeout=0');
    expect(ms).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS);
    expect(ms).toBeLessThan(4000);
  });

  it('answers headers that do not arrive in time with 408 REQUEST_TIMEOUT and X-Request-Id', async () => {
    const { raw, ms } = await exchange('GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const answer = parseAnswer(raw);
    expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code: 'REQUEST_TIMEOUT' });
    expect(ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
    expect(linesOf(answer.headers['x-request-id'])).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ res: { statusCode: 408 } }),
      }),
    ]);
  });

  it('answers a body that does not arrive in time with 408 REQUEST_TIMEOUT and the request id', async () => {
    const { raw, ms } = await exchange(
      'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n' +
        'X-Request-Id: slow-body-1\r\n\r\n{"email":',
    );
    const answer = parseAnswer(raw);
    expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer.headers['x-request-id']).toBe('slow-body-1');
    expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code: 'REQUEST_TIMEOUT' });
    expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
    await waitFor('the request line', async () => linesOf('slow-body-1').length > 0);
    expect(logs.filter((line) => line.level !== 'info')).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({
          req: expect.objectContaining({ id: 'slow-body-1' }),
          res: { statusCode: 408 },
        }),
      }),
    ]);
  });

  /** The request's one line is "request aborted" at info, and nothing was logged as a warning or an error. */
  const expectOnlyAbortLine = (id: string) => {
    expect(linesOf(id)).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({ req: expect.objectContaining({ id }) }),
        message: 'request aborted',
      },
    ]);
    expect(logs.filter((line) => line.level !== 'info')).toEqual([]);
  };

  /** Starts a request with `head` and `bodyStart`, waits for `started`, then drops the connection. */
  async function abandon(head: string, bodyStart: string, started: () => boolean): Promise<void> {
    const socket: Socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`${head}\r\n\r\n${bodyStart}`);
    await waitFor('the server to start reading the body', async () => started());
    socket.destroy();
  }

  it('logs an upload cut by the client at info, with the request id, and no error', async () => {
    const roles = await createClassWithRoles(ctx);
    const task = await createTask(ctx, roles.classId, roles.owner);
    const filesDir = join(ctx.dataDir, 'files');
    const storedBytes = () =>
      readdirSync(filesDir, { recursive: true })
        .map((name) => statSync(join(filesDir, String(name))))
        .filter((entry) => entry.isFile())
        .reduce((sum, entry) => sum + entry.size, 0);
    logs.length = 0;
    await abandon(
      [
        `POST /tasks/${task.id}/attachments HTTP/1.1`,
        'Host: x',
        `Authorization: ${roles.owner.auth}`,
        'X-Request-Id: cut-upload-1',
        'Content-Type: multipart/form-data; boundary=cut',
        'Content-Length: 1000000',
      ].join('\r\n'),
      '--cut\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\n' +
        `Content-Type: text/plain\r\n\r\n${'x'.repeat(64 * 1024)}`,
      () => storedBytes() > 0,
    );
    await waitFor('the request line', async () => linesOf('cut-upload-1').length > 0);
    // multer's clean-up of the partial file, and any late log line, come after the connection closed.
    await waitFor('the partial file to be removed', async () => storedBytes() === 0);
    expectOnlyAbortLine('cut-upload-1');
  });

  it('logs a JSON body cut by the client at info, with the request id, and no warning', async () => {
    await abandon(
      'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nX-Request-Id: cut-json-1',
      '{"email":',
      // The body parser reads at once; a moment lets it take the first bytes.
      (() => {
        const until = Date.now() + 200;
        return () => Date.now() > until;
      })(),
    );
    await waitFor('the request line', async () => linesOf('cut-json-1').length > 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expectOnlyAbortLine('cut-json-1');
  });
});
