'use strict';
/*
 * PgBouncer in transaction mode as a child process, for the tests (test/fakes/pgbouncer.ts) and the pooler
 * bench alike. Plain JavaScript, so that the bench runs it without a TypeScript step.
 */
const { spawn } = require('node:child_process');
const { chmodSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/** Debian's package puts it here; `PGBOUNCER` overrides. */
const PGBOUNCER = process.env.PGBOUNCER || '/usr/sbin/pgbouncer';
/** PgBouncer refuses to run as root: it drops to this account then (`-u`). */
const UNPRIVILEGED_USER = process.env.PGBOUNCER_USER || 'postgres';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/**
 * Starts PgBouncer on a free port of 127.0.0.1 in front of every database of the server of `serverUrl`,
 * trusting its clients as that server trusts the tests and benches (it logs in to the server with the URL's
 * user and password). Options: `poolSize` (server connections per database and user, default 20),
 * `queryWaitTimeoutSeconds` (how long a client waits for a server connection, default 30), `settings`
 * (more `[pgbouncer]` settings). Answers { port, pooled(url), close() }.
 */
async function startPgBouncer(
  serverUrl,
  { poolSize = 20, queryWaitTimeoutSeconds = 30, settings = {} } = {},
) {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cts-pgbouncer-'));
  // Readable by the unprivileged account PgBouncer drops to.
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(server.username || 'postgres');
  writeFileSync(join(dir, 'users.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`, {
    mode: 0o644,
  });
  const ini = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: join(dir, 'users.txt'),
    pool_mode: 'transaction',
    default_pool_size: poolSize,
    max_client_conn: 2000,
    query_wait_timeout: queryWaitTimeoutSeconds,
    server_login_retry: 1,
    admin_users: user,
    ...settings,
  };
  const lines = Object.entries(ini).map(([key, value]) => `${key} = ${value}`);
  const databases = `* = host=${server.hostname} port=${server.port || 5432}`;
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]\n${databases}\n\n[pgbouncer]\n${lines.join('\n')}\n`,
    {
      mode: 0o644,
    },
  );

  const runAs = process.getuid && process.getuid() === 0 ? ['-u', UNPRIVILEGED_USER] : [];
  const child = spawn(PGBOUNCER, [...runAs, join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (chunk) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGINT: PgBouncer closes its connections and exits at once.
      child.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Its own log line, not a connection: another server may have taken the port first.
  for (const deadline = Date.now() + 10_000; !log.includes(`listening on 127.0.0.1:${port}`);) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error(`PgBouncer did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    pooled(url) {
      const pooled = new URL(url);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    close,
  };
}

module.exports = { startPgBouncer };
