'use strict';
const http = require('node:http');

/**
 * One request that drains the body: status, bytes, CRLF-terminated lines (CSV records), the time to the
 * last byte and, with `json`, the parsed body.
 */
function request(port, path, { method = 'GET', auth, body, json = false, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        headers: {
          ...headers,
          ...(auth ? { Authorization: auth } : {}),
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
        },
      },
      (res) => {
        const chunks = [];
        let bytes = 0;
        let lines = 0;
        let previousEndsWithCr = false;
        res.on('data', (chunk) => {
          bytes += chunk.length;
          if (json) chunks.push(chunk);
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
            if ((i === 0 && previousEndsWithCr) || chunk[i - 1] === 13) lines++;
          }
          previousEndsWithCr = chunk[chunk.length - 1] === 13;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            bytes,
            lines,
            etag: res.headers.etag,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            body: json && bytes ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload ?? undefined);
  });
}

/** Like `request`, failing unless the status is `expected`. */
async function expectStatus(expected, port, path, options) {
  const result = await request(port, path, options);
  if (result.status !== expected) {
    throw new Error(`${options?.method ?? 'GET'} ${path} answered ${result.status}, expected ${expected}`);
  }
  return result;
}

module.exports = { request, expectStatus };
