#!/usr/bin/env node
/*
 * The server's memory under concurrent transfers, as an operator sees it: the VmRSS of one instance while
 * 20 clients each upload a 20 MiB attachment at once, then download them at once, round after round.
 *
 *   node bench/files-memory.js [rounds] [concurrency] [MiB] [drivers]
 *                                        default 10 rounds of 20 × 20 MiB, drivers "local,s3"
 *
 * BENCH_S3_UPLOAD_MEMORY_MIB sets the server's S3_UPLOAD_MEMORY_MIB (default: the service's default, 320).
 * With BENCH_S3_ENDPOINT and the other BENCH_S3_* variables (bench/README.md) the s3 runs use that store.
 *
 * For each driver: `node dist/main.js` on a fresh database, a warm-up of one upload and download per client
 * (the process meets every code path and its first burst), the idle RSS, then per round the peak RSS
 * (sampled every 10 ms) during the uploads and during the downloads, and the idle RSS once the round's
 * files are deleted. It prints each round and a summary: the peak over all rounds against
 * S3_UPLOAD_MEMORY_MIB (s3) and the idle RSS at the start, and whether the later rounds grow (the peak of
 * the last three rounds over that of rounds 2-4).
 */
'use strict';
const { randomBytes } = require('node:crypto');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { request } = require('./lib/http');
const { seedRoster } = require('./lib/seed');
const { buildIfNeeded, rssOf, sleep, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');
const { download, sampled, startBucket, upload } = require('./lib/transfers');

const MIB = 1024 * 1024;
/** The service's default S3_UPLOAD_MEMORY_MIB. */
const DEFAULT_UPLOAD_MEMORY_MIB = 320;
/** Idle time before an idle RSS is read: what a finished round frees is given back by then. */
const SETTLE_MS = 1000;
const mb = (bytes) => (bytes / MIB).toFixed(0);

/** Uploads `content` once per client at once, downloads every file at once, deletes them: the peaks. */
async function round(server, path, auth, content, concurrency) {
  const up = await sampled(server.pid, () =>
    Promise.all(Array.from({ length: concurrency }, () => upload(server.port, path, auth, content))),
  );
  const failed = up.result.find((answer) => answer.status !== 201);
  if (failed) throw new Error(`upload answered ${failed.status}: ${JSON.stringify(failed.body)}`);
  const down = await sampled(server.pid, () =>
    Promise.all(up.result.map((answer) => download(server.port, answer.body.url, auth))),
  );
  const short = down.result.find((answer) => answer.status !== 200 || answer.bytes !== content.length);
  if (short) throw new Error(`download answered ${short.status} with ${short.bytes} bytes`);
  for (const answer of up.result) {
    const deleted = await request(server.port, `${path}/${answer.body.id}`, { method: 'DELETE', auth });
    if (deleted.status !== 204) throw new Error(`delete answered ${deleted.status}`);
  }
  await sleep(SETTLE_MS);
  return { upPeak: up.rssPeak, downPeak: down.rssPeak, idle: rssOf(server.pid) };
}

async function runDriver(driver, { rounds, concurrency, content, uploadMemoryMib }) {
  const db = await createDatabase();
  const env = driver === 's3' ? await startBucket() : { FILE_STORAGE: 'local' };
  const server = await startServer({
    databaseUrl: db.url,
    env: {
      ...env,
      UPLOAD_MAX_BYTES: String(content.length),
      STORAGE_QUOTA_BYTES_PER_USER: '0',
      S3_UPLOAD_MEMORY_MIB: String(uploadMemoryMib),
    },
  });
  const data = await withClient(db.url, (client) => seedRoster(client, 3));
  const auth = bearer(data.owner.id);
  const path = `/tasks/${data.taskId}/attachments`;
  const started = rssOf(server.pid);
  await round(server, path, auth, content, concurrency);
  const idle = rssOf(server.pid);
  const results = [];
  for (let n = 1; n <= rounds; n += 1) {
    const result = await round(server, path, auth, content, concurrency);
    results.push(result);
    console.log(
      `  ${driver} round ${n}: peak ${mb(result.upPeak)} MiB uploading, ${mb(result.downPeak)} MiB downloading, ` +
        `idle ${mb(result.idle)} MiB after`,
    );
  }
  await server.stop();
  await db.drop();
  const peakOf = (list) => Math.max(...list.map((r) => Math.max(r.upPeak, r.downPeak)));
  return {
    driver,
    started,
    idle,
    peak: peakOf(results),
    early: peakOf(results.slice(1, 4)),
    late: peakOf(results.slice(-3)),
    lastIdle: results[results.length - 1].idle,
  };
}

runMain(async () => {
  const rounds = Number(process.argv[2] || 10);
  const concurrency = Number(process.argv[3] || 20);
  const fileBytes = Number(process.argv[4] || 20) * MIB;
  const drivers = (process.argv[5] || 'local,s3').split(',');
  const uploadMemoryMib = Number(process.env.BENCH_S3_UPLOAD_MEMORY_MIB || DEFAULT_UPLOAD_MEMORY_MIB);
  buildIfNeeded();
  const content = randomBytes(fileBytes);
  for (const driver of drivers) {
    const r = await runDriver(driver, { rounds, concurrency, content, uploadMemoryMib });
    const bound = driver === 's3' ? ` (S3_UPLOAD_MEMORY_MIB ${uploadMemoryMib})` : '';
    console.log(
      `files memory ${driver}${bound}, ${rounds} rounds of ${concurrency} × ${mb(fileBytes)} MiB: ` +
        `RSS ${mb(r.started)} MiB at start, ${mb(r.idle)} MiB idle after the warm-up round; ` +
        `peak ${mb(r.peak)} MiB (${mb(r.peak - r.idle)} MiB over idle); ` +
        `peak of rounds 2-4 ${mb(r.early)} MiB, of the last 3 ${mb(r.late)} MiB; idle ${mb(r.lastIdle)} MiB at the end`,
    );
  }
});
