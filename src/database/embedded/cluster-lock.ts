import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Paths, STOP_TIMEOUT_MS } from './types';

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

/**
 * The PID of the live process whose server runs this cluster, or null when none does. A crash can leave
 * `postmaster.pid` behind, or a server whose starting process died (kill -9): a stale file is removed, an
 * orphaned server is shut down.
 */
export async function runningOwner(paths: Paths): Promise<number | null> {
  const pidFile = join(paths.pgdata, 'postmaster.pid');
  const pid = readPid(pidFile);
  if (pid === null) return null;
  if (!isAlive(pid) || !isPostmasterOf(pid, paths.pgdata)) {
    unlinkSync(pidFile);
    return null;
  }
  const owner = readPid(paths.owner);
  if (owner !== null && owner !== process.pid && isAlive(owner)) return owner;
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(pid)) {
    if (Date.now() > deadline)
      throw new Error(`A leftover PostgreSQL (pid ${pid}) on ${paths.pgdata} does not stop`);
    await sleep(100);
  }
  return null;
}
