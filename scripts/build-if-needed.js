#!/usr/bin/env node
// `npm start` runs this first: builds dist/ when it is missing or older than the sources it comes from.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', 'main.js');
const sources = [
  'src',
  'migrations',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.migrations.json',
  'nest-cli.json',
];

/** Newest modification time under `path`; directories count too, so a deleted or renamed file is a change. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce(
    (latest, entry) => Math.max(latest, newest(join(path, entry))),
    stat.mtimeMs,
  );
}

function buildNeeded() {
  if (!existsSync(stamp) || !existsSync(join(root, 'dist', 'migrations'))) return true;
  const built = statSync(stamp).mtimeMs;
  return sources.some((source) => existsSync(join(root, source)) && newest(join(root, source)) > built);
}

if (buildNeeded()) {
  console.error('Building dist/ (sources changed since the last build)...');
  const result = spawnSync('npm', ['run', 'build'], {
    cwd: root,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  process.exit(result.status ?? 1);
}
