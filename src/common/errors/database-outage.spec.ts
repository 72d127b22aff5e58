import { Logger } from '@nestjs/common';
import { DatabaseError } from 'pg';
import { DatabaseOutage } from './database-outage';

describe('DatabaseOutage', () => {
  const CONNECT_TIMEOUT_MS = 2_000;
  /** A failure to connect as the database's client raises it (pg's typed error, SQLSTATE 08001). */
  const connectFailure = (message: string) =>
    Object.assign(new DatabaseError(message, 0, 'error'), { code: '08001', cause: new Error(message) });
  // pg-pool's own error naming its timeout, around the client's failure.
  const connectTimeout = () =>
    new Error('Connection terminated due to connection timeout', {
      cause: connectFailure('Connection terminated'),
    });
  const refused = () => connectFailure('connect ECONNREFUSED 127.0.0.1:5432');
  let warned: jest.SpyInstance;

  beforeEach(() => {
    jest.useFakeTimers();
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  /** An outage, then the probe's success a second later. */
  async function outageThenRecovery(outage: DatabaseOutage): Promise<void> {
    expect(outage.report(refused())).toBe(true);
    await jest.advanceTimersByTimeAsync(1_000);
  }

  it('counts a connection attempt that times out soon after a recovery to the outage that ended', async () => {
    const outage = new DatabaseOutage(() => Promise.resolve(), CONNECT_TIMEOUT_MS);
    await outageThenRecovery(outage);
    expect(warned).toHaveBeenCalledTimes(1);
    // Begun during the outage: answered 503, not logged as a new outage.
    expect(outage.report(connectTimeout())).toBe(true);
    expect(warned).toHaveBeenCalledTimes(1);
    // Any other sign of an outage is a new one.
    expect(outage.report(refused())).toBe(true);
    expect(warned).toHaveBeenCalledTimes(2);
  });

  it('logs a connection timeout begun after the recovery as a new outage', async () => {
    const outage = new DatabaseOutage(() => Promise.resolve(), CONNECT_TIMEOUT_MS);
    await outageThenRecovery(outage);
    await jest.advanceTimersByTimeAsync(CONNECT_TIMEOUT_MS);
    expect(outage.report(connectTimeout())).toBe(true);
    expect(warned).toHaveBeenCalledTimes(2);
  });
});
