import { join } from 'node:path';
import { ConfigError } from './env';

/**
 * Reads `.env` of the working directory into `process.env`. Only the entry points call it, before
 * `loadConfig`, which stays a function of its input. Node's loader sets no variable that is already set
 * (even to an empty value), so the environment wins; a missing file is no error, an unreadable one is.
 */
export function loadEnvFile(cwd: string = process.cwd()): void {
  const file = join(cwd, '.env');
  try {
    process.loadEnvFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError('.env', `could not be read from ${file} (${reason})`);
  }
}
