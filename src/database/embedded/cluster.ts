import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnIdentity } from './run-as';
import { EmbeddedPostgresOptions, Paths, RunAs } from './types';

/** What a second start needs to reach the same cluster; the password never changes after initdb. */
export interface ConnectionFile {
  port: number;
  password: string;
}

const SUPERUSER = 'postgres';

export function readConnection(paths: Paths): ConnectionFile {
  try {
    const parsed = JSON.parse(readFileSync(paths.connection, 'utf8')) as ConnectionFile;
    if (Number.isInteger(parsed.port) && typeof parsed.password === 'string') return parsed;
  } catch {
    // Reported below with the remedy.
  }
  throw new Error(
    `${paths.connection} is missing or unreadable, so the existing cluster in ${paths.pgdata} cannot be reached: ` +
      'restore the file, or remove the directory to start with an empty database',
  );
}

export function writeConnection(paths: Paths, connection: ConnectionFile): void {
  writeFileSync(paths.connection, JSON.stringify(connection), { mode: 0o600 });
}

export function connectionUrl(connection: ConnectionFile, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(connection.password)}@127.0.0.1:${connection.port}/${database}`;
}

/**
 * initdb into a scratch directory renamed into place on success: an existing `pgdata/` is always a complete
 * cluster, and an interrupted initialisation is simply redone.
 */
export function initCluster(
  paths: Paths,
  runAs: RunAs | null,
  options: EmbeddedPostgresOptions,
): ConnectionFile {
  const scratch = `${paths.pgdata}.init`;
  rmSync(scratch, { recursive: true, force: true });
  const connection: ConnectionFile = { port: 0, password: randomBytes(24).toString('base64url') };
  const passwordFile = join(paths.clusterDir, 'initdb-password');
  writeFileSync(passwordFile, `${connection.password}\n`, { mode: 0o600 });
  try {
    if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
    const result = spawnSync(
      join(paths.binDir, 'initdb'),
      [
        `--pgdata=${scratch}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        // Same ordering and case rules on every machine, independent of the locales the OS has.
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        ...(options.ephemeral ? ['--no-sync'] : []),
      ],
      { ...spawnIdentity(paths, runAs), encoding: 'utf8', stdio: 'pipe' },
    );
    if (result.error || result.status !== 0) {
      throw new Error(`initdb failed: ${result.error?.message ?? `${result.stderr}${result.stdout}`.trim()}`);
    }
  } finally {
    rmSync(passwordFile, { force: true });
  }
  writeConnection(paths, connection);
  renameSync(scratch, paths.pgdata);
  options.logger?.log(`Created a PostgreSQL cluster in ${paths.pgdata}`, 'EmbeddedPostgres');
  return connection;
}
