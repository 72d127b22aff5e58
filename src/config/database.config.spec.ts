import { itRejects } from '../../test/utils/config';
import { databaseConfig } from './database.config';

describe('databaseConfig', () => {
  it('takes postgres and postgresql URLs', () => {
    for (const url of ['postgres://u:p@db:5432/app', 'postgresql://u@127.0.0.1/app']) {
      expect(databaseConfig({ DATABASE_URL: url }).database.url).toBe(url);
    }
  });

  it('defaults to a direct connection that serves the sessions too', () => {
    const { database } = databaseConfig({ DATABASE_URL: 'postgres://u@db/app' });
    expect(database).toMatchObject({ directUrl: null, pooler: 'none' });
  });

  it('takes a transaction-mode pooler with the direct URL beside it', () => {
    const { database } = databaseConfig({
      DATABASE_URL: 'postgres://u@pooler:6432/app',
      DATABASE_DIRECT_URL: 'postgres://u@db:5432/app',
      DATABASE_POOLER: 'transaction',
    });
    expect(database).toMatchObject({ directUrl: 'postgres://u@db:5432/app', pooler: 'transaction' });
  });

  itRejects(databaseConfig, [
    ['DATABASE_POOLER', { DATABASE_URL: 'postgres://u@db/app', DATABASE_POOLER: 'session' }],
    // LISTEN through a transaction-mode pooler would never hear a notification.
    ['DATABASE_DIRECT_URL', { DATABASE_URL: 'postgres://u@db/app', DATABASE_POOLER: 'transaction' }],
    ['DATABASE_DIRECT_URL', { DATABASE_DIRECT_URL: 'postgres://u@db/app' }],
    ['DATABASE_DIRECT_URL', { DATABASE_URL: 'postgres://u@db/app', DATABASE_DIRECT_URL: 'mysql://db/app' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/app' }],
    ['DATABASE_URL', { DATABASE_URL: 'not a url' }],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }],
    ['MIGRATIONS_RUN', { MIGRATIONS_RUN: 'maybe' }],
    ['DATABASE_CONNECT_TIMEOUT_MS', { DATABASE_CONNECT_TIMEOUT_MS: '0' }],
    ['DATABASE_QUERY_TIMEOUT_MS', { DATABASE_QUERY_TIMEOUT_MS: '0' }],
    ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', { DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' }],
    ['DATABASE_IDLE_TIMEOUT_MS', { DATABASE_IDLE_TIMEOUT_MS: 'soon' }],
    ['DATABASE_KEEPALIVE_MS', { DATABASE_KEEPALIVE_MS: '10' }],
  ]);
});
