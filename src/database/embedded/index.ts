import { chownSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { AppConfig } from '../../config/config';
import { binariesFor, prepareEmbeddedBinaries } from './binaries';
import { connectionUrl, initCluster, readConnection, writeConnection } from './cluster';
import { claimCluster, ClusterLock } from './cluster-lock';
import { placeCluster, relocatedClusterDir } from './run-as';
import { choosePort, launch, PortInUseError } from './server';
import { EmbeddedPostgres, EmbeddedPostgresOptions, Paths, RunAs } from './types';

export { prepareEmbeddedBinaries } from './binaries';
export type { EmbeddedPostgres, EmbeddedPostgresOptions } from './types';

export interface ResolvedDatabase {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** Name of the application database inside the embedded cluster. */
export const EMBEDDED_DATABASE = 'classroom_tasks';

/**
 * The configured DATABASE_URL, or an embedded PostgreSQL under DATA_DIR when none is set. Tools (the operator
 * CLI) share the server of a service already running on that DATA_DIR; the service itself passes
 * `exclusive`, as its `stop()` stops the server.
 */
export async function resolveDatabase(
  config: Pick<AppConfig, 'database' | 'dataDir'>,
  options: Pick<EmbeddedPostgresOptions, 'logger' | 'exclusive'> = {},
): Promise<ResolvedDatabase> {
  if (config.database.url) return { url: config.database.url, embedded: false, stop: async () => undefined };
  const server = await startEmbeddedPostgres({ ...options, dir: join(config.dataDir, 'postgres') });
  try {
    await createDatabaseIfMissing(server.url('postgres'), EMBEDDED_DATABASE);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { url: server.url(EMBEDDED_DATABASE), embedded: true, stop: () => server.stop() };
}

const START_ATTEMPTS = 3;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dir = resolve(options.dir);
  const binDir = prepareEmbeddedBinaries();
  // Only the last level is private: parents (DATA_DIR) must stay passable for an unprivileged server.
  mkdirSync(dirname(dir), { recursive: true });
  const { runAs, clusterDir } = placeCluster(dir);
  const paths = clusterPaths(dir, clusterDir, binDir);
  for (const folder of new Set([dir, clusterDir]))
    if (!existsSync(folder)) mkdirSync(folder, { mode: 0o700 });
  if (runAs) {
    chownSync(clusterDir, runAs.uid, runAs.gid);
    paths.binDir = binariesFor(paths, runAs);
    if (clusterDir !== dir) {
      options.logger?.log(
        `Started as root: PostgreSQL runs as ${runAs.name} and keeps the cluster for ${dir} in ${clusterDir}, where ${runAs.name} can reach it`,
        'EmbeddedPostgres',
      );
    }
  }
  const claim = await claimCluster(paths, options.exclusive ?? false, options.logger);
  if ('shared' in claim) {
    const shared = readConnection(paths);
    return {
      port: shared.port,
      clusterDir,
      url: (database) => connectionUrl(shared, database),
      stop: async () => undefined,
    };
  }
  try {
    const server = await launchOnFreePort(paths, runAs, claim.lock, options);
    return {
      ...server,
      stop: async () => {
        await server.stop();
        claim.lock.release();
      },
    };
  } catch (error) {
    claim.lock.release();
    throw error;
  }
}

function clusterPaths(dir: string, clusterDir: string, binDir: string): Paths {
  return {
    dir,
    clusterDir,
    pgdata: join(clusterDir, 'pgdata'),
    connection: join(dir, 'connection.json'),
    owner: join(dir, 'owner.pid'),
    binDir,
  };
}

/**
 * Deletes the embedded cluster of `dir` (`DATA_DIR/postgres`) and the folder a start by root kept it in
 * under /var/lib, so the next start begins empty; refuses while a server runs it (the cluster lock). Answers
 * the folders removed.
 */
export async function removeEmbeddedCluster(dir: string, logger?: LoggerService): Promise<string[]> {
  const absolute = resolve(dir);
  const folders = existsSync(dirname(absolute)) ? [relocatedClusterDir(absolute), absolute] : [absolute];
  const removed: string[] = [];
  for (const clusterDir of folders.filter((folder) => existsSync(folder))) {
    // Exclusive: throws while another process runs the cluster; stops a server orphaned by a crash.
    const claim = await claimCluster(clusterPaths(absolute, clusterDir, ''), true, logger);
    try {
      rmSync(clusterDir, { recursive: true, force: true });
    } finally {
      if ('lock' in claim) claim.lock.release();
    }
    removed.push(clusterDir);
  }
  return removed;
}

async function launchOnFreePort(
  paths: Paths,
  runAs: RunAs | null,
  lock: ClusterLock,
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres> {
  const connection = existsSync(paths.pgdata) ? readConnection(paths) : initCluster(paths, runAs, options);
  let lastError: unknown;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = await choosePort(attempt === 0 ? connection.port : undefined);
    if (port !== connection.port) {
      connection.port = port;
      writeConnection(paths, connection);
    }
    try {
      return await launch(paths, runAs, connection, lock, options);
    } catch (error) {
      lastError = error;
      // Another process took the port between the check and the bind: try a fresh one.
      if (!(error instanceof PortInUseError)) break;
    }
  }
  throw lastError;
}

/** Creates the application database on first start; later starts find it. */
async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!existing.rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
