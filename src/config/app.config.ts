import { resolve } from 'node:path';
import { ConfigError, Env, str } from './env';

/**
 * The service as a whole.
 * - `NODE_ENV` (`development`): `production` makes `JWT_SECRET` mandatory.
 * - `DATA_DIR` (`./data`): uploads, the development JWT secret, the embedded database. Only resolved here;
 *   `prepareDataDir` creates it at start.
 * - `LOG_LEVEL` (`info`): pino's levels, or `silent`.
 */
export interface AppCoreConfig {
  nodeEnv: string;
  dataDir: string;
  logLevel: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function appCoreConfig(env: Env): AppCoreConfig {
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return {
    nodeEnv: str(env, 'NODE_ENV', 'development'),
    dataDir: resolve(str(env, 'DATA_DIR', './data')),
    logLevel,
  };
}
