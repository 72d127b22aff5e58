import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../utils/free-port';
import { waitFor } from '../utils/wait';

/** Debian's package puts it here; `PGBOUNCER` overrides. */
const PGBOUNCER = process.env.PGBOUNCER ?? '/usr/sbin/pgbouncer';
/** PgBouncer refuses to run as root: it drops to this account then (`-u`). */
const UNPRIVILEGED_USER = process.env.PGBOUNCER_USER ?? 'postgres';

export interface PgBouncerOptions {
  /** Server connections per database and user (`default_pool_size`). */
  poolSize?: number;
  /** How long a client waits for a server connection before PgBouncer fails its query (`query_wait_timeout`). */
  queryWaitTimeoutSeconds?: number;
  /** Extra `[pgbouncer]` settings. */
  settings?: Record<string, string | number>;
}

export interface PgBouncer {
  port: number;
  /** `url` (a URL of the server PgBouncer points at) with PgBouncer's host and port instead. */
  pooled(url: string): string;
  close(): Promise<void>;
}

/**
 * PgBouncer in transaction mode as a child process on a free port, in front of the PostgreSQL server of
 * `serverUrl` (every database of it, trusted like the server itself trusts the tests).
 */
export async function startPgBouncer(serverUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cts-pgbouncer-'));
  // Readable by the unprivileged account PgBouncer drops to.
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(server.username || 'postgres');
  const settings: Record<string, string | number> = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: join(dir, 'users.txt'),
    pool_mode: 'transaction',
    default_pool_size: options.poolSize ?? 20,
    max_client_conn: 2000,
    query_wait_timeout: options.queryWaitTimeoutSeconds ?? 30,
    server_login_retry: 1,
    admin_users: user,
    ...options.settings,
  };
  // PgBouncer logs in to the server with the password of its users file (the embedded server asks for one).
  const password = decodeURIComponent(server.password);
  writeFileSync(join(dir, 'users.txt'), `"${user}" "${password}"\n`, { mode: 0o644 });
  const ini =
    `[databases]\n* = host=${server.hostname} port=${server.port || 5432}\n\n[pgbouncer]\n` +
    Object.entries(settings)
      .map(([key, value]) => `${key} = ${value}`)
      .join('\n');
  writeFileSync(join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o644 });

  const runAs = process.getuid?.() === 0 ? ['-u', UNPRIVILEGED_USER] : [];
  const child: ChildProcess = spawn(PGBOUNCER, [...runAs, join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    // Its own log line, not a connection: another server may have taken the port first.
    await waitFor(
      'PgBouncer to listen',
      async () => {
        if (child.exitCode !== null) throw new Error(`PgBouncer exited: ${log}`);
        return log.includes(`listening on 127.0.0.1:${port}`);
      },
      10_000,
      50,
    );
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    port,
    pooled(url: string) {
      const pooled = new URL(url);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    async close() {
      if (child.exitCode === null) {
        // SIGINT: PgBouncer closes its connections and exits at once.
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
