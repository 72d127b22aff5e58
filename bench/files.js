#!/usr/bin/env node
/*
 * Upload and download of one 20 MiB attachment through each storage driver (CONTRACT §5.8: memory does not
 * grow with the file size; S3 on loopback within 20 % of the local driver's throughput).
 *
 *   node bench/files.js [rounds] [MiB]      default 3 rounds of a 20 MiB file per driver
 *
 * With BENCH_S3_ENDPOINT (and BENCH_S3_BUCKET, BENCH_S3_ACCESS_KEY_ID, BENCH_S3_SECRET_ACCESS_KEY, optionally
 * BENCH_S3_REGION) the s3 runs use that store, e.g. a MinIO on loopback, instead of s3rver.
 *
 * For each driver it starts `node dist/main.js` on a fresh database (`local`: DATA_DIR/files; `s3`: an
 * s3rver bucket in a child process on 127.0.0.1), warms both routes up with a 6 MiB file, then per round times
 * POST /tasks/:taskId/attachments of the file (streamed by the client, with Content-Length) and
 * GET /files/:fileKey to its last byte, sampling the server's VmRSS every 10 ms. It prints the medians of the
 * times and the RSS growth over the RSS before each round: in the first round, where the process meets its
 * first large transfer, and the largest in the later rounds (steady state). For s3 it also times the same file
 * sent to and read from the bucket directly, without the service (the store's own share of the time).
 */
'use strict';
const http = require('node:http');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { Readable } = require('node:stream');
const { spawn } = require('node:child_process');
const { onCleanup, runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { median } = require('./lib/load');
const { seedRoster } = require('./lib/seed');
const { ROOT, buildIfNeeded, rssOf, sleep, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');

const WRITE_CHUNK = 64 * 1024;
const RSS_SAMPLE_MS = 10;
/** Over one 5 MiB part: the warm-up takes every code path of the measured transfers, multipart included. */
const WARM_UP_BYTES = 6 * 1024 * 1024;
const BUCKET = 'cts-bench';
const MIB = 1024 * 1024;
const mb = (bytes) => (bytes / MIB).toFixed(1);

/** A multipart upload of `content` as the part `file`, written in 64 KiB chunks: { status, body, ms }. */
function upload(port, path, auth, content) {
  const boundary = `----ctsbench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          Authorization: auth,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': head.length + content.length + tail.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            body: JSON.parse(Buffer.concat(chunks).toString() || 'null'),
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
      },
    );
    req.on('error', reject);
    (async () => {
      req.write(head);
      for (let offset = 0; offset < content.length; offset += WRITE_CHUNK) {
        if (!req.write(content.subarray(offset, offset + WRITE_CHUNK))) {
          await new Promise((drained) => req.once('drain', drained));
        }
      }
      req.end(tail);
    })().catch(reject);
  });
}

/** GET to the last byte: { status, bytes, ms }. */
function download(port, path, auth) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    http
      .get({ host: '127.0.0.1', port, path, headers: { Authorization: auth } }, (res) => {
        let bytes = 0;
        res.on('data', (chunk) => (bytes += chunk.length));
        res.on('end', () =>
          resolve({ status: res.statusCode, bytes, ms: Number(process.hrtime.bigint() - started) / 1e6 }),
        );
      })
      .on('error', reject);
  });
}

/** Runs `work` while sampling the server's VmRSS: { result, rssPeak }. */
async function sampled(pid, work) {
  let peak = rssOf(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid) ?? 0)), RSS_SAMPLE_MS);
  try {
    const result = await work();
    return { result, rssPeak: Math.max(peak, rssOf(pid) ?? 0) };
  } finally {
    clearInterval(sampler);
  }
}

/** The store of the BENCH_S3_* variables, as the service's S3 settings. */
function givenBucket() {
  const required = ['BENCH_S3_BUCKET', 'BENCH_S3_ACCESS_KEY_ID', 'BENCH_S3_SECRET_ACCESS_KEY'];
  const missing = required.filter((name) => !process.env[name]);
  if (missing.length > 0) throw new Error(`BENCH_S3_ENDPOINT also needs ${missing.join(', ')}`);
  return {
    FILE_STORAGE: 's3',
    S3_ENDPOINT: process.env.BENCH_S3_ENDPOINT,
    S3_REGION: process.env.BENCH_S3_REGION || 'us-east-1',
    S3_BUCKET: process.env.BENCH_S3_BUCKET,
    S3_ACCESS_KEY_ID: process.env.BENCH_S3_ACCESS_KEY_ID,
    S3_SECRET_ACCESS_KEY: process.env.BENCH_S3_SECRET_ACCESS_KEY,
    S3_FORCE_PATH_STYLE: 'true',
  };
}

/**
 * An s3rver bucket in a child process of its own, as a real store would be: in this process it would share
 * the event loop with the client writing the upload.
 */
async function startBucket() {
  if (process.env.BENCH_S3_ENDPOINT) return givenBucket();
  const directory = mkdtempSync(join(tmpdir(), 'cts-bench-s3-'));
  const script = `
    const S3rver = require('s3rver');
    const http = require('node:http');
    const s3 = new S3rver({ silent: true, directory: ${JSON.stringify(directory)},
      configureBuckets: [{ name: ${JSON.stringify(BUCKET)}, configs: [] }] });
    s3.configureBuckets().then(() => {
      const server = http.createServer(s3.callback());
      server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
    });`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => {
    child.kill();
    rmSync(directory, { recursive: true, force: true });
  });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (line) => resolve(Number(line.toString().trim())));
    child.once('exit', (code) => reject(new Error(`s3rver exited with code ${code}`)));
  });
  return {
    FILE_STORAGE: 's3',
    S3_ENDPOINT: `http://127.0.0.1:${port}`,
    S3_BUCKET: BUCKET,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
  };
}

/**
 * The store's own time for `content`, without the service: sent with the service's multipart upload
 * (dist/files/s3-object-upload.js, 64 KiB chunks as from a socket) and read back to the last byte.
 */
async function storeAlone(env, content) {
  const { GetObjectCommand } = require('@aws-sdk/client-s3');
  const { s3Client } = require(join(ROOT, 'dist', 'files', 's3-file-storage'));
  const { PartBuffers, uploadObject } = require(join(ROOT, 'dist', 'files', 's3-object-upload'));
  const client = s3Client({
    bucket: env.S3_BUCKET,
    region: env.S3_REGION ?? 'us-east-1',
    endpoint: env.S3_ENDPOINT,
    credentials: { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY },
    forcePathStyle: true,
    uploadMemoryBytes: 0,
  });
  const key = `bench-${randomBytes(8).toString('hex')}`;
  const chunks = function* () {
    for (let offset = 0; offset < content.length; offset += WRITE_CHUNK)
      yield content.subarray(offset, offset + WRITE_CHUNK);
  };
  let started = process.hrtime.bigint();
  // Two part buffers, as the service's upload takes when it has room.
  await uploadObject(client, new PartBuffers(2), { bucket: env.S3_BUCKET, key }, Readable.from(chunks()));
  const upMs = Number(process.hrtime.bigint() - started) / 1e6;
  started = process.hrtime.bigint();
  const { Body } = await client.send(new GetObjectCommand({ Bucket: env.S3_BUCKET, Key: key }));
  let bytes = 0;
  for await (const chunk of Body) bytes += chunk.length;
  if (bytes !== content.length) throw new Error(`the store answered ${bytes} bytes`);
  const downMs = Number(process.hrtime.bigint() - started) / 1e6;
  client.destroy();
  return { upMs, downMs };
}

async function runDriver(driver, rounds, content) {
  const db = await createDatabase();
  const env = driver === 's3' ? await startBucket() : { FILE_STORAGE: 'local' };
  // The server migrates the new database at start; the seed comes after.
  const server = await startServer({
    databaseUrl: db.url,
    env: { ...env, UPLOAD_MAX_BYTES: String(Math.max(content.length, 20 * MIB)) },
  });
  const data = await withClient(db.url, (client) => seedRoster(client, 3));
  const auth = bearer(data.owner.id);
  const path = `/tasks/${data.taskId}/attachments`;
  const warm = await upload(server.port, path, auth, content.subarray(0, WARM_UP_BYTES));
  if (warm.status !== 201) throw new Error(`warm-up upload answered ${warm.status}`);
  await download(server.port, warm.body.url, auth);
  const uploads = [];
  const downloads = [];
  const growths = [];
  const direct = { up: [], down: [] };
  for (let round = 0; round < rounds; round += 1) {
    await sleep(300);
    const baseline = rssOf(server.pid);
    const up = await sampled(server.pid, () => upload(server.port, path, auth, content));
    if (up.result.status !== 201) throw new Error(`upload answered ${up.result.status}`);
    const down = await sampled(server.pid, () => download(server.port, up.result.body.url, auth));
    if (down.result.status !== 200 || down.result.bytes !== content.length) {
      throw new Error(`download answered ${down.result.status} with ${down.result.bytes} bytes`);
    }
    uploads.push(up.result.ms);
    downloads.push(down.result.ms);
    growths.push(Math.max(up.rssPeak, down.rssPeak) - baseline);
    if (driver === 's3') {
      const alone = await storeAlone(env, content);
      direct.up.push(alone.upMs);
      direct.down.push(alone.downMs);
    }
  }
  await server.stop();
  await db.drop();
  const mibps = (ms) => content.length / MIB / (ms / 1000);
  const upMs = median(uploads);
  const downMs = median(downloads);
  return {
    driver,
    upMs,
    downMs,
    upMbps: mibps(upMs),
    downMbps: mibps(downMs),
    firstGrowth: growths[0],
    steadyGrowth: growths.length > 1 ? Math.max(...growths.slice(1)) : null,
    direct: driver === 's3' ? { upMs: median(direct.up), downMs: median(direct.down) } : null,
  };
}

runMain(async () => {
  const rounds = Number(process.argv[2] || 3);
  const fileBytes = Number(process.argv[3] || 20) * MIB;
  buildIfNeeded();
  const content = randomBytes(fileBytes);
  const results = [];
  for (const driver of ['local', 's3']) results.push(await runDriver(driver, rounds, content));
  const [local] = results;
  const percent = (value, of) => `${((value / of) * 100).toFixed(0)} %`;
  for (const r of results) {
    console.log(
      `files ${r.driver} (${mb(fileBytes)} MiB, ${rounds} rounds): ` +
        `upload ${r.upMs.toFixed(0)} ms (${r.upMbps.toFixed(0)} MiB/s, ${percent(r.upMbps, local.upMbps)} of local), ` +
        `download ${r.downMs.toFixed(0)} ms (${r.downMbps.toFixed(0)} MiB/s, ${percent(r.downMbps, local.downMbps)} of local), ` +
        `RSS growth ${mb(r.firstGrowth)} MiB in the first round, ` +
        (r.steadyGrowth === null ? 'no later round' : `at most ${mb(r.steadyGrowth)} MiB in the later ones`),
    );
    if (r.direct) {
      console.log(
        `files ${r.driver} store alone: upload ${r.direct.upMs.toFixed(0)} ms, download ${r.direct.downMs.toFixed(0)} ms ` +
          `(the service takes ${percent(r.upMs, r.direct.upMs)} and ${percent(r.downMs, r.direct.downMs)} of the store's own time)`,
      );
    }
  }
});
