import { resolve } from 'node:path';
import { itRejects } from '../../test/utils/config';
import { appCoreConfig } from './app.config';

describe('appCoreConfig', () => {
  it('resolves DATA_DIR against the working directory', () => {
    expect(appCoreConfig({})).toEqual({ nodeEnv: 'development', dataDir: resolve('data'), logLevel: 'info' });
    expect(appCoreConfig({ DATA_DIR: 'var/../state', NODE_ENV: 'production', LOG_LEVEL: 'warn' })).toEqual({
      nodeEnv: 'production',
      dataDir: resolve('state'),
      logLevel: 'warn',
    });
  });

  itRejects(appCoreConfig, [['LOG_LEVEL', { LOG_LEVEL: 'verbose' }]]);
});
