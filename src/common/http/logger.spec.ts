import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import pino, { LoggerOptions, Logger as Pino } from 'pino';
import { QueryFailedError } from 'typeorm';
import { loggerOptions, logRequests } from './logger';

/** The line logRequests writes for one request to `url`. */
function loggedLine(url: string): Record<string, unknown> {
  const lines: Record<string, unknown>[] = [];
  const logger = { info: (line: Record<string, unknown>) => lines.push(line) } as unknown as Pino;
  const request = { url, method: 'GET', headers: {} } as IncomingMessage;
  const response = Object.assign(new EventEmitter(), {
    statusCode: 200,
    writableEnded: true,
    setHeader: () => undefined,
  }) as unknown as ServerResponse;
  logRequests(logger)(request, response, () => undefined);
  response.emit('close');
  return lines[0];
}

describe('logRequests', () => {
  it('keeps e-mailed tokens in query strings out of the log', () => {
    const token = 'dGhpcy1pcy1hLXJlc2V0LXRva2VuLWZvci1hLXVzZXI';
    const line = loggedLine(`/auth/verify-token?token=${token}&purpose=PASSWORD_RESET`);
    expect(line.req).toMatchObject({ url: '/auth/verify-token?token=[REDACTED]&purpose=PASSWORD_RESET' });
    expect(JSON.stringify(line)).not.toContain(token);
    expect(loggedLine(`/auth/verify-token?purpose=REGISTRATION&token=${token}`).req).toMatchObject({
      url: '/auth/verify-token?purpose=REGISTRATION&token=[REDACTED]',
    });
  });

  it('keeps live inbox stream tickets out of the log', () => {
    const ticket = 'c3RyZWFtLXRpY2tldC1mb3ItYS11c2VyLWFuZC1tb3Jl';
    const line = loggedLine(`/users/me/notifications/stream?ticket=${ticket}`);
    expect(line.req).toMatchObject({ url: '/users/me/notifications/stream?ticket=[REDACTED]' });
    expect(JSON.stringify(line)).not.toContain(ticket);
  });

  it('keeps calendar feed tokens out of the log', () => {
    const token = 'Y2FsZW5kYXItZmVlZC10b2tlbi1vZi1hLXVzZXItMTIz';
    const line = loggedLine(`/calendar/${token}.ics`);
    expect(line.req).toMatchObject({ url: '/calendar/[REDACTED].ics' });
    expect(JSON.stringify(line)).not.toContain(token);
  });

  it('keeps the signatures of signed file URLs out of the log', () => {
    const signature = 'q3Xv0mX2o8yJ0n5Qk9kq1l2m3n4o5p6q7r8s9t0u1v2';
    expect(loggedLine(`/files/abc/content?expires=1767225600&signature=${signature}`).req).toMatchObject({
      url: '/files/abc/content?expires=1767225600&signature=[REDACTED]',
    });
  });

  it('logs other URLs as they came', () => {
    expect(loggedLine('/users/me/notifications?limit=5&cursor=abc').req).toMatchObject({
      url: '/users/me/notifications?limit=5&cursor=abc',
    });
  });
});

describe('loggerOptions', () => {
  it('keeps the bound values of a failed query out of the log, the query text in', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const options = loggerOptions({ logLevel: 'info', tracing: { endpoint: null } })
      .pinoHttp as LoggerOptions;
    const hash = '$2b$10$abcdefghijklmnopqrstuuJ6oHn3XhLwZyC1Q0s8bCk4Q3YtB8U2e';
    const failed = new QueryFailedError(
      'UPDATE users SET password_hash = $2 WHERE id = $1',
      ['8c4a1d1e-2f0b-4c1a-9e57-6a0f1c2b3d4e', hash],
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    );
    pino(options, sink).error({ err: failed, requestId: 'r1' }, 'Unhandled error');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(hash);
    expect(JSON.parse(lines[0])).toMatchObject({
      err: { query: 'UPDATE users SET password_hash = $2 WHERE id = $1', code: '57P01' },
    });
  });
});
