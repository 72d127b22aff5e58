import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { connectionUrl, readConnection } from './cluster';
import { Paths, STOP_TIMEOUT_MS } from './types';

/** Checks that a server of the cluster answers on its port before its `postmaster.pid` counts as stale. */
const ANSWER_ATTEMPTS = 3;
const ANSWER_INTERVAL_MS = 500;
const ANSWER_TIMEOUT_MS = 2_000;

/**
 * An exclusive `flock` on `<clusterDir>/cluster.lock`. The kernel keeps it for the open file, whatever the
 * PID namespace, so it holds across containers sharing a volume (and across hosts where the file system
 * supports flock). The service keeps the file open and hands it to the server it starts, so the lock lasts
 * as long as either runs, and the kernel drops it when both are gone: it is never stale.
 */
export interface ClusterLock {
  /** The open lock file, passed to the server; null where no `flock` command exists. */
  readonly fd: number | null;
  release(): void;
}

export type Claim = { lock: ClusterLock } | { shared: true };

/**
 * Makes sure no other server runs this cluster, anywhere, before one is started here: returns the lock to
 * start it with, or, for a tool (not `exclusive`), the running server to share. A crash can leave
 * `postmaster.pid` behind, or a server whose starting process died (kill -9): an orphaned server in this
 * PID namespace is shut down; the file is removed only when the lock is free and nothing answers on its port.
 */
export async function claimCluster(
  paths: Paths,
  exclusive: boolean,
  logger: LoggerService | undefined,
): Promise<Claim> {
  const fd = openSync(join(paths.clusterDir, 'cluster.lock'), 'a', 0o600);
  const release = () => closeSync(fd);
  try {
    const locked = tryLock(fd);
    if (locked === null && process.platform === 'linux') {
      logger?.warn(
        `No flock command: nothing keeps a second container on ${paths.dir} from starting the same cluster`,
        'EmbeddedPostgres',
      );
    }
    const claim = await decide(paths, exclusive, fd, locked);
    if (claim !== 'own') {
      release();
      return claim;
    }
    return { lock: { fd: locked === null ? null : fd, release } };
  } catch (error) {
    release();
    throw error;
  }
}

async function decide(
  paths: Paths,
  exclusive: boolean,
  fd: number,
  locked: boolean | null,
): Promise<{ shared: true } | 'own'> {
  const pidFile = join(paths.pgdata, 'postmaster.pid');
  for (; ; locked = tryLock(fd)) {
    const pid = readPid(pidFile);
    if (pid !== null && isAlive(pid) && isPostmasterOf(pid, paths.pgdata)) {
      const owner = readPid(paths.owner);
      if (owner !== null && owner !== process.pid && isAlive(owner)) return inUse(paths, exclusive, owner);
      await stopOrphan(pid, paths);
      continue;
    }
    // Held, and no server of ours in this PID namespace: a process elsewhere runs it, or is starting it.
    if (locked === false) return inUse(paths, exclusive, null);
    // A server of an older version holds no lock, and its PID may be in another namespace.
    if (pid !== null && (await answers(paths, pidFile))) return inUse(paths, exclusive, null);
    if (pid !== null) unlinkSync(pidFile);
    return 'own';
  }
}

async function inUse(paths: Paths, exclusive: boolean, pid: number | null): Promise<{ shared: true }> {
  if (!exclusive && (pid !== null || (await answers(paths, join(paths.pgdata, 'postmaster.pid'))))) {
    return { shared: true };
  }
  const who =
    pid !== null
      ? `another process (pid ${pid}): stop it first`
      : 'another process (in another container or on another host, or still starting): stop it first, ' +
        'and run the operator CLI where the service runs (docker exec)';
  throw new Error(`The embedded database in ${paths.dir} is in use by ${who}`);
}

/** true: locked by this open file; false: another holds it; null: no `flock` command here (e.g. macOS). */
function tryLock(fd: number): boolean | null {
  const result = spawnSync('flock', ['-x', '-n', '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] });
  if (result.error) return null;
  return result.status === 0;
}

/** Whether a server of this cluster (it takes the password) answers on the port `postmaster.pid` names. */
async function answers(paths: Paths, pidFile: string): Promise<boolean> {
  let port: number;
  let password: string;
  try {
    port = Number(readFileSync(pidFile, 'utf8').split('\n')[3]);
    password = readConnection(paths).password;
  } catch {
    return false;
  }
  if (!Number.isInteger(port) || port <= 0) return false;
  for (let attempt = 0; attempt < ANSWER_ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(ANSWER_INTERVAL_MS);
    const client = new Client({
      connectionString: connectionUrl({ port, password }, 'postgres'),
      connectionTimeoutMillis: ANSWER_TIMEOUT_MS,
    });
    try {
      await client.connect();
      return true;
    } catch (error) {
      // Starting up, shutting down or recovering: a server is there.
      if ((error as { code?: string }).code === '57P03') return true;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return false;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0], 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Linux tells whether a live PID really is a postmaster of this cluster; elsewhere assume it is. */
function isPostmasterOf(pid: number, pgdata: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(pgdata);
  } catch {
    return !existsSync('/proc/self');
  }
}

async function stopOrphan(pid: number, paths: Paths): Promise<void> {
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(pid)) {
    if (Date.now() > deadline)
      throw new Error(`A leftover PostgreSQL (pid ${pid}) on ${paths.pgdata} does not stop`);
    await sleep(100);
  }
}
