'use strict';
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { onCleanup } = require('./cleanup');

/** Admin connection to the PostgreSQL server; the benches create and drop their own databases on it. */
const ADMIN_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withClient(url, work) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database `cts_bench_<random>`, dropped at clean-up (also on failure). */
async function createDatabase() {
  const host = new URL(ADMIN_URL).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
    throw new Error(`DATABASE_URL must point to a loopback address, got ${host}`);
  }
  const name = `cts_bench_${randomBytes(4).toString('hex')}`;
  await withClient(ADMIN_URL, (db) => db.query(`CREATE DATABASE "${name}"`));
  const drop = onCleanup(() =>
    withClient(ADMIN_URL, (db) => db.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  );
  return { name, url: withDatabase(ADMIN_URL, name), drop };
}

module.exports = { ADMIN_URL, withClient, createDatabase };
