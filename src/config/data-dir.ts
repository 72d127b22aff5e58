import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JWT_SECRET_MIN_LENGTH } from './auth.config';
import { AppConfig, LoadedConfig } from './config';
import { ConfigError } from './env';

/**
 * The start step of the server, the operator CLI and the test apps, after `loadConfig`: creates DATA_DIR
 * when missing, checks that it takes files, and fills in the development JWT secret kept there. Found out at
 * the first upload instead, an unwritable DATA_DIR would fail every upload with 500.
 */
export function prepareDataDir(config: LoadedConfig): AppConfig {
  const { dataDir } = config;
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError('DATA_DIR', `must be a writable directory, got "${dataDir}" (${reason})`);
  }
  return { ...config, jwt: { ...config.jwt, secret: config.jwt.secret ?? devJwtSecret(dataDir) } };
}

/** Development secret: generated once and kept in DATA_DIR so tokens survive a restart. */
function devJwtSecret(dataDir: string): string {
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    // The bound of JWT_SECRET: a short or emptied file would sign every login token with a guessable key.
    if (kept.length < JWT_SECRET_MIN_LENGTH) {
      throw new ConfigError(
        'JWT_SECRET',
        `is unset and ${file} holds fewer than ${JWT_SECRET_MIN_LENGTH} characters (delete it to generate a new one)`,
      );
    }
    return kept;
  }
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
