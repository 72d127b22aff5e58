import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Paths, RunAs } from './types';

/**
 * PostgreSQL refuses to run as root. Started by root, the server runs as the owner of an existing cluster,
 * else as the system's `postgres` account, else as `nobody`; accounts are never created on the host.
 */
export function chooseRunAs(paths: Paths): RunAs | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (existsSync(paths.pgdata)) {
    const owner = statSync(paths.pgdata);
    if (uid !== 0 && owner.uid !== uid) {
      throw new Error(
        `${paths.pgdata} belongs to uid ${owner.uid}, but the service runs as uid ${uid}: start it as that user`,
      );
    }
    if (uid !== 0) return null;
    if (owner.uid === 0) throw new Error(`${paths.pgdata} belongs to root; PostgreSQL cannot run as root`);
    return { uid: owner.uid, gid: owner.gid, name: `uid ${owner.uid}` };
  }
  if (uid !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    const account = lookupAccount(name);
    if (account) return account;
  }
  throw new Error(
    'Running as root, and neither a "postgres" nor a "nobody" account exists to run PostgreSQL',
  );
}

function lookupAccount(name: string): RunAs | null {
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid: id('-u'), gid: id('-g'), name };
  } catch {
    return null;
  }
}

export const ROOT_REMEDY =
  'run the service as an unprivileged user, choose a DATA_DIR that user can reach, or set DATABASE_URL';

/** Fails early, with a remedy, when the unprivileged account cannot reach the data directory. */
export function checkDataReachable(paths: Paths, runAs: RunAs): void {
  for (let current = dirname(paths.dir); ; current = dirname(current)) {
    const stat = statSync(current);
    const bit = stat.uid === runAs.uid ? 0o100 : stat.gid === runAs.gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) {
      throw new Error(
        `The service runs as root, so PostgreSQL runs as ${runAs.name}, which cannot enter ${current}: ${ROOT_REMEDY}`,
      );
    }
    if (dirname(current) === current) break;
  }
}

/** How initdb and the server are started: as the unprivileged account, if any, in the cluster's folder. */
export function spawnIdentity(paths: Paths, runAs: RunAs | null) {
  // A minimal, predictable environment: server messages in English, no secrets of the service.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
  return { cwd: paths.dir, env, ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) };
}
