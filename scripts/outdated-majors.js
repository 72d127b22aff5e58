#!/usr/bin/env node
// Prints the direct dependencies whose installed version is a major or more behind the registry's latest
// (for a 0.x package, a minor: its breaking step). A report for CI's log and for the routine of adopting new
// majors (docs/operations.md, "Keeping dependencies current"): it always exits 0, also when the registry
// cannot be reached, so a new major never fails a run on its own.
'use strict';
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const { dependencies = {}, devDependencies = {} } = require(join(root, 'package.json'));

/** The part of a version whose change may break: the major, or `0.minor` below 1.0.0. */
function breakingLine(version) {
  const [major, minor] = String(version).split('.').map(Number);
  return major === 0 ? [0, minor] : [major, 0];
}

/** How many breaking steps `latest` is ahead of `current` (majors, or minors of a 0.x line). */
function stepsBehind(current, latest) {
  const [currentMajor, currentMinor] = breakingLine(current);
  const [latestMajor, latestMinor] = breakingLine(latest);
  if (latestMajor !== currentMajor) return latestMajor - currentMajor;
  return latestMinor - currentMinor;
}

// `npm outdated` exits 1 when anything is outdated; its JSON on stdout is the answer either way.
const run = spawnSync('npm', ['outdated', '--json', '--long'], { cwd: root, encoding: 'utf8' });
let outdated;
try {
  outdated = JSON.parse(run.stdout || '{}');
} catch {
  outdated = null;
}
if (!outdated || outdated.error) {
  console.log(
    `outdated majors: not checked (npm outdated failed: ${run.stderr.trim().split('\n')[0] || 'no answer'})`,
  );
  process.exit(0);
}

const behind = Object.entries(outdated)
  .filter(([name]) => name in dependencies || name in devDependencies)
  .map(([name, info]) => ({ name, ...info, steps: stepsBehind(info.current, info.latest) }))
  .filter(({ current, latest, steps }) => current && latest && steps > 0)
  .sort((a, b) => a.name.localeCompare(b.name));

if (behind.length === 0) {
  console.log('outdated majors: none, every direct dependency is on its latest major');
} else {
  console.log(
    `outdated majors: ${behind.length} direct dependencies a major or more behind (a report, not a failure)`,
  );
  for (const { name, current, latest, steps } of behind) {
    const kind = name in dependencies ? 'dependency' : 'devDependency';
    console.log(
      `  ${name.padEnd(28)} ${String(current).padEnd(10)} -> ${String(latest).padEnd(10)} ${kind}, ${steps} behind`,
    );
  }
  console.log('  Why some stay behind on purpose: docs/decisions.md, "Current majors (issue 32)".');
}
