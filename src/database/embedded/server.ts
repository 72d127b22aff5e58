import { ChildProcess, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { ConnectionFile, connectionUrl } from './cluster';
import { ClusterLock } from './cluster-lock';
import { spawnIdentity } from './run-as';
import { EmbeddedPostgres, EmbeddedPostgresOptions, Paths, RunAs, STOP_TIMEOUT_MS } from './types';

const READY_TIMEOUT_MS = 60_000;
/** Lines of server output kept to explain a failed start. */
const OUTPUT_TAIL_LINES = 40;

export class PortInUseError extends Error {}

/** The remembered port when it is still free, else one the OS hands out. */
export async function choosePort(preferred: number | undefined): Promise<number> {
  if (preferred) {
    const port = await listenOnce(preferred).catch(() => null);
    if (port !== null) return port;
  }
  return listenOnce(0);
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object'
          ? resolvePort(address.port)
          : reject(new Error('No port was assigned')),
      );
    });
  });
}

/** Starts the server on the cluster and waits until it takes connections. */
export async function launch(
  paths: Paths,
  runAs: RunAs | null,
  connection: ConnectionFile,
  lock: ClusterLock,
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres> {
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    timezone: 'UTC',
    log_timezone: 'UTC',
    ...(options.ephemeral ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } : {}),
  };
  const args = ['-D', paths.pgdata, '-p', String(connection.port)];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
  // Written before the server exists, so a concurrent start never mistakes this one for an orphan.
  writeFileSync(paths.owner, String(process.pid));
  const child = spawn(join(paths.binDir, 'postgres'), args, {
    ...spawnIdentity(paths, runAs),
    // The server inherits the open lock file, so the lock lasts while it runs, even without this process.
    stdio: ['ignore', 'pipe', 'pipe', ...(lock.fd === null ? [] : [lock.fd])],
    detached: !options.ephemeral,
  });
  const output = collectOutput(child, options.logger);
  let exited = false;
  const exitPromise = new Promise<void>((resolveExit) => {
    const onGone = () => {
      exited = true;
      resolveExit();
    };
    child.once('exit', onGone);
    // The binary could not be run at all (missing, not executable): there is no 'exit' then.
    child.once('error', (error) => {
      output.push(error.message);
      onGone();
    });
  });
  // Last resort when the service exits without stop() (crash, uncaught error): ask for a fast shutdown.
  const onProcessExit = () => {
    if (!exited) child.kill('SIGINT');
  };
  process.on('exit', onProcessExit);

  const url = (database: string) => connectionUrl(connection, database);
  const stop = async () => {
    if (!exited) {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
      await exitPromise;
      clearTimeout(timer);
    }
    process.off('exit', onProcessExit);
    rmSync(paths.owner, { force: true });
  };

  try {
    await waitUntilReady(url('postgres'), () => exited);
  } catch (error) {
    await stop();
    const tail = output.join('\n');
    if (/could not bind|Address already in use/i.test(tail)) throw new PortInUseError(tail);
    throw new Error(`Embedded PostgreSQL did not start (${(error as Error).message}):\n${tail}`);
  }
  options.logger?.log(
    `PostgreSQL listening on 127.0.0.1:${connection.port}${runAs ? ` as ${runAs.name}` : ''}`,
    'EmbeddedPostgres',
  );
  return { port: connection.port, clusterDir: paths.clusterDir, url, stop };
}

/** Refusals while starting or stopping, and our own shutdown ending sessions: normal, not worth a warning. */
const EXPECTED_FATAL =
  /the database system is (starting up|shutting down)|terminating connection due to administrator command/;

/** Forwards server output to the log (debug; FATAL and PANIC as warnings) and keeps the tail for errors. */
function collectOutput(child: ChildProcess, logger: LoggerService | undefined): string[] {
  const tail: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
      if (/\b(FATAL|PANIC):/.test(line) && !EXPECTED_FATAL.test(line)) logger?.warn(line, 'EmbeddedPostgres');
      else logger?.debug?.(line, 'EmbeddedPostgres');
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return tail;
}

async function waitUntilReady(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited()) throw new Error('the server exited');
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(100);
  }
}
