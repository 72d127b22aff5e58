import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger as Pino } from 'pino';
import { logRequests } from './logger';

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

  it('logs other URLs as they came', () => {
    expect(loggedLine('/users/me/notifications?limit=5&cursor=abc').req).toMatchObject({
      url: '/users/me/notifications?limit=5&cursor=abc',
    });
  });
});
