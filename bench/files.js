#!/usr/bin/env node
/*
 * Upload and download of one 20 MiB attachment through each storage driver (the targets: memory does not
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
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { Readable } = require('node:stream');
const { runMain } = require('./lib/cleanup');
const { createDatabase, withClient } = require('./lib/db');
const { median } = require('./lib/load');
const { seedRoster } = require('./lib/seed');
const { ROOT, buildIfNeeded, rssOf, sleep, startServer } = require('./lib/server');
const { bearer } = require('./lib/tokens');
const { WRITE_CHUNK, download, sampled, startBucket, upload } = require('./lib/transfers');

/** Over one 5 MiB part: the warm-up takes every code path of the measured transfers, multipart included. */
const WARM_UP_BYTES = 6 * 1024 * 1024;
const MIB = 1024 * 1024;
const mb = (bytes) => (bytes / MIB).toFixed(1);

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
