'use strict';
/* Transfers of the file benches (files.js, files-memory.js): uploads and downloads as a client makes them,
 * RSS sampling of the server, and the S3 bucket the s3 runs store into. */
const http = require('node:http');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { spawn } = require('node:child_process');
const { onCleanup } = require('./cleanup');
const { ROOT, rssOf } = require('./server');

const WRITE_CHUNK = 64 * 1024;
const RSS_SAMPLE_MS = 10;
const BUCKET = 'cts-bench';

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

module.exports = { BUCKET, WRITE_CHUNK, download, sampled, startBucket, upload };
