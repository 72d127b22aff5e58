#!/usr/bin/env bash
# Builds a local Node.js base image for the Dockerfile where no registry of container images is reachable,
# laid out as the official node:<major>-bookworm-slim: a minimal Debian bookworm root file system
# (debootstrap), the node of the Dockerfile's default base's major (scripts/image-node.sh: this machine's,
# or the npm registry's binary), the npm major that Node release ships (npm 10 for Node 22, from the npm
# registry; not this machine's npm, so that a build that works only with another npm fails here as it
# would on the official image), and a `node` user (uid/gid 1000), imported into podman's image store.
#
#   sudo scripts/container-base-image.sh            # builds localhost/node-base:<node major> unless current
#   sudo scripts/container-base-image.sh --force    # builds it again
#   podman build --format docker --build-arg NODE_IMAGE=localhost/node-base:22 -t classroom-tasks .
#
# An image of that name is reused only when it was made by this script's current text from the same node
# binary, npm and suite (a label records them); otherwise it is built again.
#
# Environment: NODE_BASE_IMAGE (image name; default localhost/node-base:<major of `node`>), NODE_BASE_NPM
# (default npm@10, the npm of node:22 images), DEBIAN_MIRROR (default: the first Debian mirror in /etc/apt,
# else http://deb.debian.org/debian), DEBIAN_SUITE (default bookworm). Needs root, debootstrap and podman.
# Prints the image name as its last line.
set -euo pipefail

force=false
[ "${1:-}" = "--force" ] && force=true

node_bin="$(readlink -f "$("$(dirname "$0")/image-node.sh" | tail -n 1)/node")"
node_major="$("$node_bin" -p 'process.versions.node.split(".")[0]')"
image="${NODE_BASE_IMAGE:-localhost/node-base:${node_major}}"
base_npm="${NODE_BASE_NPM:-npm@10}"
suite="${DEBIAN_SUITE:-bookworm}"
recipe="$(cat "$0" "$node_bin" | sha256sum | cut -c1-16)-$base_npm-$suite"

if ! $force && podman image exists "$image" &&
  [ "$(podman image inspect --format '{{index .Labels "node-base.recipe"}}' "$image")" = "$recipe" ]; then
  echo "$image is current; not rebuilt (--force builds it again)" >&2
  echo "$image"
  exit 0
fi

for tool in debootstrap podman; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install -y $tool)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 1; }

# The mirror apt already uses here is the one known to be reachable.
default_mirror="$({ grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d \
  2>/dev/null || true; } | head -n1 | tr -d ' ')"
mirror="${DEBIAN_MIRROR:-${default_mirror:-http://deb.debian.org/debian}}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"

echo "debootstrap $suite from $mirror ..." >&2
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
}

# A clean environment: the caller's (NODE_OPTIONS, proxies, …) is not the image's.
in_rootfs() { env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$(command -v chroot)" "$rootfs" "$@"; }

install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
# npm's package bundles its dependencies: its tarball unpacked is a complete npm.
mkdir -p "$work/npm" "$rootfs/usr/local/lib/node_modules/npm"
npm pack --silent --pack-destination "$work/npm" "$base_npm" >/dev/null
tar -xzf "$work"/npm/npm-*.tgz -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
in_rootfs groupadd --gid 1000 node
in_rootfs useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# This machine's trust store goes along (as NODE_EXTRA_CA_CERTS, which node adds to its own CAs), so that
# `npm ci` in the build and the service's outgoing HTTPS work behind a TLS-inspecting proxy it trusts.
ca_file="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
ca_env=()
if [ -r "$ca_file" ]; then
  install -D -m 0644 "$ca_file" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  ca_env=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
fi
# Fails here, not in a later build, when node needs a library the minimal system lacks.
in_rootfs node -e 'process.exit(0)'
echo "node $(in_rootfs node --version), npm $(in_rootfs npm --version)" >&2

# Package lists and caches are of no use in an image.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/log/* "$rootfs"/tmp/*

tar --numeric-owner -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL node-base.recipe=$recipe" \
  "${ca_env[@]}" --change 'CMD ["node"]' - "$image" >/dev/null
echo "$image"
