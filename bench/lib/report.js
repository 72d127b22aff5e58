'use strict';
const { execFileSync } = require('node:child_process');
const os = require('node:os');

/** Date, CPUs, memory and Node version, as the results file records them. */
function machine() {
  const run = (file, args) => {
    try {
      return execFileSync(file, args, { encoding: 'utf8' }).trim();
    } catch {
      return 'n/a';
    }
  };
  return {
    date: new Date().toISOString(),
    nproc: run('nproc', []),
    cpu: os.cpus()[0]?.model ?? 'n/a',
    memory: run('free', ['-h']),
    node: process.version,
    postgres: null,
  };
}

/** The 1, 5 and 15 minute load averages: other work on the machine shows here. */
const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');

/** A Markdown table; `rows` are arrays of cells, already formatted. */
function table(header, rows) {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const fixed = (value, digits = 0) =>
  value === null || value === undefined ? 'n/a' : Number(value).toFixed(digits);
const percent = (ratio) => (ratio === null || ratio === undefined ? '' : `${(ratio * 100).toFixed(0)}%`);

module.exports = { machine, loadAverage, table, fixed, percent };
