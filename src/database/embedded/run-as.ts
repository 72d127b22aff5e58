import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Paths, RunAs } from './types';

/**
 * Where a service started by root keeps the clusters its PostgreSQL account cannot reach under DATA_DIR
 * (a checkout under /root, a `mktemp -d` folder). Persistent, unlike /tmp and /var/tmp, which are cleaned.
 */
export const RELOCATED_CLUSTERS = '/var/lib/classroom-tasks/postgres';

export const ROOT_REMEDY =
  'run the service as an unprivileged user, choose a DATA_DIR that user can reach, or set DATABASE_URL';

/** Who runs PostgreSQL, and where its cluster lives. */
export interface Placement {
  runAs: RunAs | null;
  clusterDir: string;
}

/**
 * PostgreSQL refuses to run as root. Started by root, the server runs as the owner of an existing cluster,
 * else as the system's `postgres` account, else as `nobody`; accounts are never created on the host. The
 * cluster lives in `dir`, unless root started it and that account cannot enter a folder above `dir`: then
 * in a folder of its own under RELOCATED_CLUSTERS, named after `dir`. An existing cluster never moves.
 */
export function placeCluster(dir: string): Placement {
  const uid = process.getuid?.();
  if (uid !== 0) {
    const pgdata = join(dir, 'pgdata');
    const owner = uid !== undefined && existsSync(pgdata) ? statSync(pgdata).uid : uid;
    if (owner !== uid) {
      throw new Error(
        `${pgdata} belongs to uid ${owner}, but the service runs as uid ${uid}: start it as that user`,
      );
    }
    return { runAs: null, clusterDir: dir };
  }
  const relocated = relocatedClusterDir(dir);
  for (const clusterDir of [dir, relocated]) {
    const pgdata = join(clusterDir, 'pgdata');
    if (!existsSync(pgdata)) continue;
    const owner = statSync(pgdata);
    if (owner.uid === 0) throw new Error(`${pgdata} belongs to root; PostgreSQL cannot run as root`);
    const runAs = { uid: owner.uid, gid: owner.gid, name: accountName(owner.uid) };
    requireReachable(clusterDir, runAs);
    return { runAs, clusterDir };
  }
  const runAs = systemAccount();
  if (closedAncestor(dir, runAs) === null) return { runAs, clusterDir: dir };
  mkdirSync(RELOCATED_CLUSTERS, { recursive: true, mode: 0o755 });
  requireReachable(relocated, runAs);
  return { runAs, clusterDir: relocated };
}

/** One folder per DATA_DIR, however it was spelled (relative, through a symlink). */
export function relocatedClusterDir(dir: string): string {
  const parent = realpathSync(dirname(dir));
  const key = createHash('sha256')
    .update(join(parent, basename(dir)))
    .digest('hex')
    .slice(0, 16);
  return join(RELOCATED_CLUSTERS, key);
}

function systemAccount(): RunAs {
  for (const name of ['postgres', 'nobody']) {
    const account = lookupAccount(name);
    if (account) return account;
  }
  throw new Error(
    'Running as root, and neither a "postgres" nor a "nobody" account exists to run PostgreSQL',
  );
}

/** `id` answers for an account name or a numeric uid alike. */
const id = (flag: string, account: string): string =>
  execFileSync('id', [flag, account], { encoding: 'utf8', stdio: 'pipe' }).trim();

function lookupAccount(name: string): RunAs | null {
  try {
    const uid = Number(id('-u', name));
    return { uid, gid: Number(id('-g', name)), name: accountName(uid) };
  } catch {
    return null;
  }
}

/**
 * How logs and messages name the account: `postgres (uid 101)`, or `uid 101` for a uid without an account,
 * the same whether the first start chose the account or a later one found it owning the cluster.
 */
function accountName(uid: number): string {
  try {
    return `${id('-un', String(uid))} (uid ${uid})`;
  } catch {
    return `uid ${uid}`;
  }
}

/** The first folder above `dir` the account cannot enter, or null when it reaches `dir`. */
function closedAncestor(dir: string, runAs: RunAs): string | null {
  for (let current = dirname(dir); ; current = dirname(current)) {
    const stat = statSync(current);
    const bit = stat.uid === runAs.uid ? 0o100 : stat.gid === runAs.gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) return current;
    if (dirname(current) === current) return null;
  }
}

/** Fails early, with a remedy, when the unprivileged account cannot reach the cluster's folder. */
function requireReachable(dir: string, runAs: RunAs): void {
  const closed = closedAncestor(dir, runAs);
  if (closed !== null) {
    throw new Error(
      `The service runs as root, so PostgreSQL runs as ${runAs.name}, which cannot enter ${closed}: ${ROOT_REMEDY}`,
    );
  }
}

/** How initdb and the server are started: as the unprivileged account, if any, in the cluster's folder. */
export function spawnIdentity(paths: Paths, runAs: RunAs | null) {
  // A minimal, predictable environment: server messages in English, no secrets of the service.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
  return { cwd: paths.clusterDir, env, ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) };
}
