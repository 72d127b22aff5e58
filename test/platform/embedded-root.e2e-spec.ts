import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { Client } from 'pg';
import { EmbeddedPostgres, removeEmbeddedCluster, startEmbeddedPostgres } from '../../src/database/embedded';

/**
 * `npm start` as root in a private folder (a checkout under /root, a `mktemp -d` folder): PostgreSQL runs as
 * an unprivileged account that cannot enter it, so the cluster must live where that account can.
 */
const asRoot = process.getuid?.() === 0;
const describeAsRoot = asRoot ? describe : describe.skip;
if (!asRoot) console.warn('embedded-root.e2e-spec: skipped, it needs a test run as root');

async function query(server: EmbeddedPostgres, sql: string): Promise<unknown[]> {
  const client = new Client({ connectionString: server.url('postgres') });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describeAsRoot('embedded PostgreSQL started by root in a 0700 folder', () => {
  let home: string;
  const clusterDirs = new Set<string>();
  const logged: string[] = [];
  const logger: LoggerService = {
    log: (message) => logged.push(String(message)),
    warn: (message) => logged.push(String(message)),
    error: (message) => logged.push(String(message)),
  };
  const start = async () => {
    const server = await startEmbeddedPostgres({
      dir: join(home, 'data', 'postgres'),
      exclusive: true,
      logger,
    });
    clusterDirs.add(server.clusterDir);
    return server;
  };

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'cts-private-'));
    chmodSync(home, 0o700);
  });
  afterAll(() => {
    for (const dir of [home, ...clusterDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the cluster where its account can reach it, says where, and finds it again', async () => {
    const first = await start();
    try {
      expect(first.clusterDir.startsWith(home)).toBe(false);
      expect(logged).toContainEqual(expect.stringContaining(`in ${first.clusterDir}`));
      const folder = statSync(first.clusterDir);
      expect(folder.uid).not.toBe(0);
      expect(folder.mode & 0o777).toBe(0o700);
      expect(await query(first, 'SHOW data_directory')).toEqual([
        { data_directory: join(first.clusterDir, 'pgdata') },
      ]);
      await query(first, "CREATE TABLE kept AS SELECT 'still here' AS note");
    } finally {
      await first.stop();
    }
    // How to reach the cluster stays under DATA_DIR, with the service.
    expect(existsSync(join(home, 'data', 'postgres', 'connection.json'))).toBe(true);

    const again = await start();
    try {
      expect(again.clusterDir).toBe(first.clusterDir);
      expect(await query(again, 'SELECT note FROM kept')).toEqual([{ note: 'still here' }]);
      await expect(removeEmbeddedCluster(join(home, 'data', 'postgres'))).rejects.toThrow(/in use/);
    } finally {
      await again.stop();
    }
    // Both starts name the account PostgreSQL runs as the same way: first chosen, then found owning the cluster.
    const accounts = new Set(
      logged.flatMap((line) =>
        [...line.matchAll(/ as (\S+ \(uid \d+\)|uid \d+)(?: and|$)/g)].map((m) => m[1]),
      ),
    );
    expect([...accounts]).toEqual([expect.stringMatching(/^\S+ \(uid \d+\)$/)]);

    // `npm run cli -- database:remove-embedded --yes`: the cluster under /var/lib goes with DATA_DIR's folder.
    expect(await removeEmbeddedCluster(join(home, 'data', 'postgres'))).toEqual([
      first.clusterDir,
      join(home, 'data', 'postgres'),
    ]);
    expect(existsSync(first.clusterDir)).toBe(false);
    expect(existsSync(join(home, 'data', 'postgres'))).toBe(false);
  }, 120_000);
});
