import {
  ArgumentsHost,
  BadRequestException,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ThrottlerException } from '@nestjs/throttler';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { DatabaseOutage } from './database-outage';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { AppError, ErrorCode } from './app-error';

/** pg's typed error as the server sends it. */
function serverError(message: string, code: string, severity = 'ERROR'): DatabaseError {
  return Object.assign(new DatabaseError(message, 0, 'error'), { code, severity });
}

/**
 * A connection failure as the database's client and pools raise it (`database/connection-failures.ts`):
 * pg's typed error with a class 08 SQLSTATE, the driver's own error as its cause.
 */
function connectionFailure(code: '08001' | '08006', driverMessage: string): DatabaseError {
  return Object.assign(new DatabaseError(driverMessage, 0, 'error'), {
    code,
    cause: new Error(driverMessage),
  });
}

/** The adapter's reply as Express would do it, on the fake response below. */
const adapterHost = {
  httpAdapter: {
    reply: (
      response: { status(code: number): { json(body: unknown): unknown } },
      body: unknown,
      status: number,
    ) => response.status(status).json(body),
  },
} as unknown as HttpAdapterHost;

const newFilter = (): AllExceptionsFilter =>
  // A probe that never answers: the outage, once reported, stays.
  new AllExceptionsFilter(new DatabaseOutage(() => new Promise(() => undefined)), adapterHost);

interface Captured {
  status?: number;
  body?: unknown;
  headers: Record<string, string>;
  destroyed: boolean;
}

/** Runs the filter on `exception` for one fake request and records what it answered. */
function answer(exception: unknown, headersSent = false, filter = newFilter()): Captured {
  const captured: Captured = { headers: {}, destroyed: false };
  const response = {
    headersSent,
    setHeader: (name: string, value: string) => (captured.headers[name] = value),
    status(code: number) {
      captured.status = code;
      return this;
    },
    json: (body: unknown) => (captured.body = body),
    destroy: () => (captured.destroyed = true),
  };
  const request = { id: 'req-42', method: 'POST', originalUrl: '/classes' };
  const host = {
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => request }),
  } as unknown as ArgumentsHost;
  filter.catch(exception, host);
  return captured;
}

describe('AllExceptionsFilter', () => {
  let logged: jest.SpyInstance;
  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => logged.mockRestore());

  it('answers an unexpected error with 500 INTERNAL_ERROR, no details, and logs it with the request id', () => {
    const error = new Error('relation "secret_table" does not exist');
    const result = answer(error);
    expect(result.status).toBe(500);
    expect(result.body).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR' });
    expect(JSON.stringify(result.body)).not.toMatch(/secret_table|at /);
    expect(logged).toHaveBeenCalledTimes(1);
    expect(logged.mock.calls[0][0]).toMatchObject({
      err: error,
      requestId: 'req-42',
      method: 'POST',
      url: '/classes',
    });
  });

  it('treats thrown non-errors the same way', () => {
    expect(answer('a string').body).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR' });
    expect(answer(null).status).toBe(500);
  });

  it('answers an AppError with its status, code, message and headers, without logging', () => {
    const result = answer(new AppError(ErrorCode.RATE_LIMITED, 'Too many e-mails', { 'Retry-After': '120' }));
    expect(result).toMatchObject({
      status: 429,
      body: { error: 'Too many e-mails', code: 'RATE_LIMITED' },
      headers: { 'Retry-After': '120' },
    });
    expect(answer(AppError.notFound('Task')).body).toEqual({ error: 'Task not found', code: 'NOT_FOUND' });
    expect(logged).not.toHaveBeenCalled();
  });

  it('maps framework exceptions to the API error codes', () => {
    expect(answer(new NotFoundException('Cannot GET /nope'))).toMatchObject({
      status: 404,
      body: { error: 'Route not found', code: 'NOT_FOUND' },
    });
    expect(answer(new BadRequestException(['a must be a string', 'b is required']))).toMatchObject({
      status: 400,
      body: { error: 'a must be a string; b is required', code: 'VALIDATION_ERROR' },
    });
    expect(answer(new PayloadTooLargeException()).body).toEqual({
      error: expect.any(String),
      code: 'PAYLOAD_TOO_LARGE',
    });
    expect(answer(new ThrottlerException())).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    expect(logged).not.toHaveBeenCalled();
  });

  it('maps body-parser and multer errors raised before Nest routing', () => {
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      type: 'entity.too.large',
    });
    expect(answer(tooLarge)).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
    const badJson = Object.assign(new SyntaxError('Unexpected end of JSON input'), {
      status: 400,
      type: 'entity.parse.failed',
    });
    expect(answer(badJson)).toEqual(
      expect.objectContaining({
        status: 400,
        body: { error: 'Malformed JSON body', code: 'VALIDATION_ERROR' },
      }),
    );
    const fileTooLarge = Object.assign(new Error('File too large'), { code: 'LIMIT_FILE_SIZE' });
    expect(answer(fileTooLarge)).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(logged).not.toHaveBeenCalled();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the database does not answer, not as a bug', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const failures = [
      new QueryFailedError('SELECT 1', [], connectionFailure('08006', 'Query read timeout')),
      new QueryFailedError('SELECT 1', [], serverError('terminating connection', '57P01')),
      new QueryFailedError('SELECT 1', [], serverError('no connection', '08006')),
      connectionFailure('08001', 'timeout exceeded when trying to connect'),
      // pg-pool's own error naming its timeout, around the client's failure to connect.
      new Error('Connection terminated due to connection timeout', {
        cause: connectionFailure('08001', 'Connection terminated'),
      }),
      connectionFailure('08006', 'Connection terminated unexpectedly'),
      connectionFailure('08001', 'connect ECONNREFUSED 127.0.0.1:5432'),
      // ALTER DATABASE … ALLOW_CONNECTIONS false: every new connection is refused.
      serverError('database "app" is not currently accepting connections', '55000', 'FATAL'),
      // A pooled connection reset outside any query of TypeORM's (the token check's prepared read).
      connectionFailure('08006', 'read ECONNRESET'),
      // Wrapped by whatever it passed through.
      new Error('authentication failed', { cause: connectionFailure('08006', 'Connection terminated') }),
    ];
    for (const failure of failures) {
      expect(answer(failure)).toEqual({
        status: 503,
        body: { error: 'Database unavailable, try again later', code: 'SERVICE_UNAVAILABLE' },
        headers: { 'Retry-After': '5' },
        destroyed: false,
      });
    }
    expect(logged).not.toHaveBeenCalled();
    const refused = new QueryFailedError('INSERT', [], serverError('duplicate', '23505'));
    expect(answer(refused).status).toBe(500);
    // The same socket codes and texts from anything but the database's client and pools: no database outage.
    const outagesLogged = warned.mock.calls.length;
    const otherOrigins = [
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), {
        code: 'ECONNREFUSED',
        syscall: 'connect',
      }),
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.example'), { code: 'EAI_AGAIN' }),
      }),
      Object.assign(new Error('read ETIMEDOUT'), { code: 'ETIMEDOUT', syscall: 'read' }),
      new Error('Connection terminated unexpectedly'),
      new Error('Query read timeout'),
      Object.assign(new Error('no connection'), { code: '08006' }),
    ];
    for (const failure of otherOrigins) expect([failure, answer(failure).status]).toEqual([failure, 500]);
    expect(warned).toHaveBeenCalledTimes(outagesLogged);
    // Not in a state its statement needs, but the session lives on: a bug, not an outage.
    const notReady = serverError('currval of sequence is not yet defined', '55000', 'ERROR');
    expect(answer(new QueryFailedError('SELECT currval($1)', [], notReady)).status).toBe(500);
    // A transaction the service left idle too long ends its session: the service's fault, not an outage.
    const leftIdle = serverError(
      'terminating connection due to idle-in-transaction timeout',
      '25P03',
      'FATAL',
    );
    expect(answer(new QueryFailedError('UPDATE tasks', [], leftIdle)).status).toBe(500);
    warned.mockRestore();
  });

  it('answers a statement timeout 500 and logs the statement without its values, as no outage', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const cancelled = serverError('canceling statement due to statement timeout', '57014');
    const error = new QueryFailedError('SELECT pg_sleep($1)', ['secret'], cancelled);
    expect(answer(error)).toMatchObject({ status: 500, body: { code: 'INTERNAL_ERROR' }, headers: {} });
    expect(logged).toHaveBeenCalledTimes(1);
    expect(logged.mock.calls[0][0]).toMatchObject({ statement: 'SELECT pg_sleep($1)', requestId: 'req-42' });
    expect(logged.mock.calls[0][1]).toBe('Statement timed out');
    expect(warned).not.toHaveBeenCalled();
    warned.mockRestore();
  });

  it('answers 507 INSUFFICIENT_STORAGE when there is no room left, warning once, not once per request', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const filter = newFilter();
    const full = [
      Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        syscall: 'write',
      }),
      Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT', syscall: 'write' }),
      Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG', syscall: 'write' }),
      new QueryFailedError('INSERT', [], serverError('could not extend file', '53100')),
    ];
    for (const failure of full) {
      expect(answer(failure, false, filter)).toMatchObject({
        status: 507,
        body: { error: 'Not enough storage left, nothing was stored', code: 'INSUFFICIENT_STORAGE' },
      });
    }
    expect(warned).toHaveBeenCalledTimes(1);
    expect(logged).not.toHaveBeenCalled();
    warned.mockRestore();
  });

  it('drops the connection when the response has already started', () => {
    const result = answer(new Error('stream broke'), true);
    expect(result.destroyed).toBe(true);
    expect(result.status).toBeUndefined();
    expect(result.body).toBeUndefined();
  });
});
