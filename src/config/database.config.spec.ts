import { itRejects } from '../../test/utils/config';
import { databaseConfig } from './database.config';

describe('databaseConfig', () => {
  it('takes postgres and postgresql URLs', () => {
    for (const url of ['postgres://u:p@db:5432/app', 'postgresql://u@127.0.0.1/app']) {
      expect(databaseConfig({ DATABASE_URL: url }).database.url).toBe(url);
    }
  });

  itRejects(databaseConfig, [
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
