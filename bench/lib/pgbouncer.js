'use strict';
const { spawn } = require('node:child_process');
const { chmodSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { onCleanup } = require('./cleanup');
const { freePort, sleep } = require('./server');

/** Debian's package puts it here; PgBouncer refuses root, so it drops to PGBOUNCER_USER (`-u`). */
const PGBOUNCER = process.env.PGBOUNCER || '/usr/sbin/pgbouncer';
const UNPRIVILEGED_USER = process.env.PGBOUNCER_USER || 'postgres';

/**
 * PgBouncer in transaction mode in front of the server of `serverUrl`, holding at most `serverConnections`
 * connections to it per database; stopped at clean-up. Answers { port, pooled(url) }.
 */
async function startPgBouncer(serverUrl, { serverConnections }) {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cts-bench-pgbouncer-'));
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(server.username || 'postgres');
  writeFileSync(join(dir, 'users.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`, { mode: 0o644 });
  const settings = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: join(dir, 'users.txt'),
    pool_mode: 'transaction',
    default_pool_size: serverConnections,
    max_db_connections: serverConnections,
    max_client_conn: 1000,
    // Within the service's DATABASE_CONNECT_TIMEOUT_MS (5 s): an outage answers 503 in time (docs/operations.md).
    query_wait_timeout: 5,
  };
  const ini = `[databases]\n* = host=${server.hostname} port=${server.port || 5432}\n\n[pgbouncer]\n${Object.entries(
    settings,
  )
    .map(([key, value]) => `${key} = ${value}`)
    .join('\n')}\n`;
  writeFileSync(join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  const runAs = process.getuid() === 0 ? ['-u', UNPRIVILEGED_USER] : [];
  const child = spawn(PGBOUNCER, [...runAs, join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => (log = (log + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  onCleanup(async () => {
    if (child.exitCode === null) {
      child.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  for (const deadline = Date.now() + 10_000; !log.includes(`listening on 127.0.0.1:${port}`); await sleep(50)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`PgBouncer did not start: ${log}`);
  }
  return {
    port,
    pooled(url) {
      const pooled = new URL(url);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
  };
}

module.exports = { startPgBouncer };
