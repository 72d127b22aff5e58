#!/usr/bin/env bash
# CI's container check, on every run: installs podman (with runc and debootstrap) from Debian when missing,
# makes the local Node base image (scripts/container-base-image.sh: laid out as the official node image,
# with its npm major), builds the image from this checkout and runs it as an operator would
# (scripts/container-test.sh, through test/platform/container.e2e-spec.ts, which also checks that every
# step of the script reported). A Dockerfile or dependency change that breaks the build or the running
# image fails CI here.
#
# Kept between runs on one machine, and only these: the installed Debian packages, the base image (rebuilt
# when its script, the node binary, its npm or the Debian suite change: a label records them) and podman's
# layer cache (keyed by the files each step copies, so a changed lockfile or Dockerfile step runs again).
# No step is skipped on their account: the build and every check run each time.
#
# Needs root. Lines starting with "measure:" report seconds and bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
missing=()
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} from Debian ..."
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
echo "measure: container_tools_seconds $((SECONDS - started))"
# Podman's defaults hold on this kind of machine (root, the overlay storage driver, cgroups v1 with runc,
# which scripts/container-test.sh selects); a host where they do not fails here, before the long build.
podman info >/dev/null || { echo "podman cannot run here (podman info failed)" >&2; exit 1; }

started=$SECONDS
base="$(scripts/container-base-image.sh | tail -n 1)"
echo "measure: base_image_seconds $((SECONDS - started))"

CONTAINER_TESTS=1 NODE_IMAGE="$base" npx jest test/platform/container.e2e-spec.ts
# Build layers that no build of the past week used would otherwise pile up run after run.
podman image prune -f --filter until=168h >/dev/null
