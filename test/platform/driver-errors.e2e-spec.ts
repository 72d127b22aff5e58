import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Logger } from '@nestjs/common';
import { createTransport } from 'nodemailer';
import { Client, DatabaseError } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import { DatabaseOutage } from '../../src/common/errors/database-outage';
import { failureCause } from '../../src/common/errors/failure-cause';
import { loadConfig } from '../../src/config/config';
import { ConnectionFailure, DatabasePool } from '../../src/database/connection-failures';
import { FailFastClient } from '../../src/database/fail-fast-client';
import { StatementWithDeadline } from '../../src/database/sql';
import { buildDataSourceOptions } from '../../src/database/typeorm-options';
import { startTcpRelay, TcpRelay } from '../fakes/tcp-relay';
import { freePort } from '../utils/free-port';
import { sleep } from '../utils/wait';

/**
 * Database failures are told by origin and by the driver's type: the database's client and pools raise a
 * connection failure as pg's typed error with a class 08 SQLSTATE (`src/database/connection-failures.ts`),
 * and the classification (`failureCause`) reads nothing else. pg gives some of its own errors no code, only
 * a text; each is provoked here through the real driver, so a pg release that rewords one fails this test
 * instead of turning outages into 500s. Errors of other origins with the same socket codes (S3, SMTP, a
 * webhook) are no database outage.
 */
const SHORT_MS = 300;
/** A connection attempt's limit where the attempt must succeed, on a loaded machine. */
const CONNECT_MS = 3_000;

const server = (): URL => new URL(process.env.TEST_ADMIN_DATABASE_URL!);
/** The test server's URL through 127.0.0.1:`port`. */
function urlVia(port: number): string {
  const url = server();
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/** `error` is the boundary's connection failure: its SQLSTATE, and pg's own error as its cause. */
function expectConnectionFailure(error: unknown, sqlState: '08001' | '08006', driverMessage: RegExp): void {
  expect(error).toBeInstanceOf(ConnectionFailure);
  expect(error).toBeInstanceOf(DatabaseError);
  expect((error as DatabaseError).code).toBe(sqlState);
  expect(((error as Error).cause as Error).message).toMatch(driverMessage);
  expect(failureCause(error)).toBe('database-unavailable');
}

describe('connection failures of the real driver', () => {
  let relay: TcpRelay;
  const clients: Client[] = [];
  const pools: DatabasePool[] = [];

  beforeEach(async () => {
    relay = await startTcpRelay({ host: server().hostname, port: Number(server().port || 5432) });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    for (const pool of pools.splice(0)) await pool.end().catch(() => undefined);
    await relay.close();
  });

  const client = (options: { connectionTimeoutMillis?: number; query_timeout?: number } = {}): Client => {
    const made = new FailFastClient({ connectionString: urlVia(relay.port), ...options });
    made.on('error', () => undefined);
    clients.push(made);
    return made;
  };
  const pool = (options: { max?: number; connectionTimeoutMillis?: number } = {}): DatabasePool => {
    const made = new DatabasePool({
      connectionString: urlVia(relay.port),
      Client: FailFastClient,
      ...options,
    });
    made.on('error', () => undefined);
    pools.push(made);
    return made;
  };

  it('a refused connection is 08001, whatever the form of connect', async () => {
    const closedUrl = urlVia(await freePort());
    const refused = new FailFastClient({ connectionString: closedUrl });
    const error = await failureOf(() => refused.connect());
    expectConnectionFailure(error, '08001', /ECONNREFUSED/);
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    const byCallback = await new Promise<Error | null>((resolve) =>
      new FailFastClient({ connectionString: closedUrl }).connect(resolve),
    );
    expectConnectionFailure(byCallback, '08001', /ECONNREFUSED/);
  });

  it('a connection attempt the network leaves unanswered is 08001', async () => {
    relay.blackhole();
    const error = await failureOf(() => client({ connectionTimeoutMillis: SHORT_MS }).connect());
    // Any failure of connect is one: its text is not read.
    expectConnectionFailure(error, '08001', /./);
  });

  it('an answer past query_timeout is 08006 ("Query read timeout"), and so is the next query of its client', async () => {
    const late = client({ query_timeout: SHORT_MS });
    await late.connect();
    relay.blackhole();
    expectConnectionFailure(await failureOf(() => late.query('SELECT 1')), '08006', /^Query read timeout$/);
    // The client drops its connection once an answer is late: the next query is refused by pg itself.
    await sleep(50);
    expectConnectionFailure(
      await failureOf(() => late.query('SELECT 1')),
      '08006',
      /^(Client was closed and is not queryable|Connection terminated)$/,
    );
  });

  it("a statement's own query_timeout replaces its client's, shorter or longer (bulkRows relies on it)", async () => {
    const patient = client({ query_timeout: 10_000 });
    await patient.connect();
    const slow: StatementWithDeadline = { text: 'SELECT pg_sleep(0.6)', query_timeout: 5_000 };
    const hasty = client({ query_timeout: SHORT_MS });
    await hasty.connect();
    expect((await hasty.query(slow)).rowCount).toBe(1);
    relay.blackhole();
    const started = Date.now();
    const short: StatementWithDeadline = { text: 'SELECT 1', query_timeout: SHORT_MS };
    expectConnectionFailure(await failureOf(() => patient.query(short)), '08006', /^Query read timeout$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a connection reset mid-statement is 08006, and so is the next query of its client', async () => {
    const lost = client();
    await lost.connect();
    const running = failureOf(() => lost.query('SELECT pg_sleep(5)'));
    await sleep(100);
    relay.reset();
    expectConnectionFailure(await running, '08006', /^(read ECONNRESET|Connection terminated unexpectedly)$/);
    expectConnectionFailure(
      await failureOf(() => lost.query('SELECT 1')),
      '08006',
      /^Client has encountered a connection error and is not queryable$/,
    );
  });

  it('a query of a client that was ended is 08006 ("Client was closed")', async () => {
    const ended = client();
    await ended.connect();
    await ended.end();
    expectConnectionFailure(
      await failureOf(() => ended.query('SELECT 1')),
      '08006',
      /^Client was closed and is not queryable$/,
    );
  });

  it('a session the server ends is its own typed error (57P01), and the connection then 08006', async () => {
    const ended = client();
    await ended.connect();
    const { rows } = await ended.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const killer = new Client({ connectionString: server().toString() });
    await killer.connect();
    const running = failureOf(() => ended.query('SELECT pg_sleep(5)'));
    await sleep(100);
    await killer.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    await killer.end();
    const error = await running;
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).not.toBeInstanceOf(ConnectionFailure);
    expect([(error as DatabaseError).code, (error as DatabaseError).severity]).toEqual(['57P01', 'FATAL']);
    expect(failureCause(error)).toBe('database-unavailable');
    expectConnectionFailure(
      await failureOf(() => ended.query('SELECT 1')),
      '08006',
      /^(Client has encountered a connection error and is not queryable|Connection terminated unexpectedly)$/,
    );
  });

  it("the pool's wait for a free connection past connectionTimeoutMillis is 08001, in either form", async () => {
    const full = pool({ max: 1, connectionTimeoutMillis: CONNECT_MS });
    const held = await full.connect();
    expectConnectionFailure(
      await failureOf(() => full.connect()),
      '08001',
      /^timeout exceeded when trying to connect$/,
    );
    // pg-pool's own query takes its connection through the callback form of connect.
    expectConnectionFailure(
      await failureOf(() => full.query('SELECT 1')),
      '08001',
      /^timeout exceeded when trying to connect$/,
    );
    held.release();
    await expect(full.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });

  it("the pool's connection attempt past connectionTimeoutMillis: pg-pool's text around an 08001", async () => {
    relay.blackhole();
    const error = await failureOf(() => pool({ connectionTimeoutMillis: SHORT_MS }).connect());
    // DatabaseOutage tells such an attempt by this text (one begun during an outage that has just ended).
    expect((error as Error).message).toBe('Connection terminated due to connection timeout');
    expect(error).not.toBeInstanceOf(DatabaseError);
    expectConnectionFailure((error as Error).cause, '08001', /^Connection terminated/);
    expect(failureCause(error)).toBe('database-unavailable');
  });

  it("TypeORM's pool is the database's: its connect and query failures are connection failures", async () => {
    const config = loadConfig({
      JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
      DATABASE_URL: urlVia(relay.port),
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      DATABASE_QUERY_TIMEOUT_MS: '1000',
    });
    const dataSource = new DataSource(buildDataSourceOptions(config, urlVia(relay.port)));
    await dataSource.initialize();
    try {
      await dataSource.query('SELECT 1');
      relay.blackhole();
      const late = await failureOf(() => dataSource.query('SELECT 1'));
      expect(late).toBeInstanceOf(QueryFailedError);
      expectConnectionFailure((late as QueryFailedError).driverError, '08006', /^Query read timeout$/);
      expect(failureCause(late)).toBe('database-unavailable');
      // A new connection cannot be made either: the pool's connect failure, through TypeORM.
      const refused = await failureOf(() => dataSource.query('SELECT 1'));
      expect(failureCause(refused)).toBe('database-unavailable');
    } finally {
      await dataSource.destroy().catch(() => undefined);
    }
  });
});

/** The codes and messages of `error` and of its causes, as one text. */
function codesAndMessages(error: unknown, depth = 0): string {
  if (!error || typeof error !== 'object' || depth > 5) return '';
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown };
  return `${String(code)} ${String(message)} ${codesAndMessages(cause, depth + 1)}`;
}

describe('errors of other origins with the codes of a lost connection', () => {
  it('S3, SMTP and webhook failures to connect are no database outage, and log none', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const closedPort = await freePort();
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${closedPort}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
      maxAttempts: 1,
    });
    const errors = [
      await failureOf(() => s3.send(new GetObjectCommand({ Bucket: 'bucket', Key: 'key' }))),
      await failureOf(() =>
        createTransport({ host: '127.0.0.1', port: closedPort }).sendMail({
          from: 'a@example.com',
          to: 'b@example.com',
          text: 'x',
        }),
      ),
      await failureOf(() => fetch(`http://127.0.0.1:${closedPort}/hook`, { method: 'POST' })),
    ];
    s3.destroy();
    // Each says ECONNREFUSED, in its code or its message, or those of its cause.
    for (const error of errors) expect(codesAndMessages(error)).toMatch(/ECONNREFUSED/);
    const outage = new DatabaseOutage(() => new Promise(() => undefined));
    for (const error of errors) {
      expect(failureCause(error)).toBeNull();
      expect(outage.report(error)).toBe(false);
    }
    expect(warned).not.toHaveBeenCalled();
    outage.onModuleDestroy();
    warned.mockRestore();
  });
});
