import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../utils/free-port';
import { waitFor } from '../utils/wait';

/** Debian's `prometheus` package (`.ci/run` installs it). */
export const PROMETHEUS = '/usr/bin/prometheus';
/** Where the Prometheus tests run: with the package, and always under CI=true (they fail without it there). */
export const prometheusRunsHere = existsSync(PROMETHEUS) || process.env.CI === 'true';

/** One sample of an instant query: its labels and value. */
export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface Prometheus {
  /** Answers an instant query through the HTTP API (`/api/v1/query`). */
  query(promql: string): Promise<Sample[]>;
  /** Waits until a query answers at least one sample satisfying `accept` (default: any). */
  waitFor(promql: string, accept?: (samples: Sample[]) => boolean): Promise<Sample[]>;
  close(): Promise<void>;
}

/** The real Prometheus server, scraping `targets` (host:port) every second, its data in a temporary directory. */
export async function startPrometheus(targets: string[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'cts-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s' },
      scrape_configs: [{ job_name: 'classroom-task-service', static_configs: [{ targets }] }],
    }),
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const query = async (promql: string): Promise<Sample[]> => {
    const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as {
      status: string;
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success') throw new Error(`Query ${promql} failed: ${JSON.stringify(body)}`);
    return body.data.result.map(({ metric, value }) => ({ metric, value: Number(value[1]) }));
  };
  const close = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      `Prometheus to start (${log})`,
      () =>
        fetch(`${base}/-/ready`).then(
          (response) => response.ok,
          () => false,
        ),
      20_000,
      100,
    );
  } catch (error) {
    await close();
    throw new Error(`${(error as Error).message}\n${log}`);
  }
  return {
    query,
    waitFor: (promql, accept = (samples) => samples.length > 0) =>
      waitFor(
        `Prometheus to answer ${promql}`,
        async () => {
          const samples = await query(promql);
          return accept(samples) ? samples : null;
        },
        20_000,
        250,
      ),
    close,
  };
}
