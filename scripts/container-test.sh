#!/usr/bin/env bash
# Builds the image with podman and runs it as an operator would: embedded PostgreSQL on a volume, /health,
# a registration and login, the operator CLI beside the running service, the HEALTHCHECK, a clean stop on
# SIGTERM and a restart that finds the data again.
# Also checks that the image holds no TypeScript compiler and no ts-node. Takes a few minutes; not part of
# `npm test` (test/platform/container.e2e-spec.ts runs it when CONTAINER_TESTS=1). Needs root and podman.
#
#   scripts/container-test.sh
#
# Environment:
#   NODE_IMAGE         base image (default: the Dockerfile's own, node:22-bookworm-slim from the registry; where
#                      no registry of images is reachable: NODE_IMAGE="$(scripts/container-base-image.sh | tail -n 1)")
#   CONTAINER_IMAGE    name of the built image (default localhost/classroom-tasks:test; kept afterwards)
#   CONTAINER_RUNTIME  OCI runtime (default: runc when installed; crun refuses hybrid cgroup v1 hosts)
#   CONTAINER_NOFILE   open-files limit of the containers (default: this shell's hard limit)
#   CONTAINER_NPROC    processes limit of the containers (default 4096)
# Lines starting with "measure:" report numbers (seconds, bytes). The containers and the volume are removed.
set -euo pipefail
cd "$(dirname "$0")/.."

image="${CONTAINER_IMAGE:-localhost/classroom-tasks:test}"
base="${NODE_IMAGE:-}"
build_args=()
[ -n "$base" ] && build_args=(--build-arg "NODE_IMAGE=$base")
name="classroom-tasks-test-$$"
volume="$name-data"
containers=()

podman_global=()
runtime="${CONTAINER_RUNTIME:-$(command -v runc || true)}"
[ -n "$runtime" ] && podman_global=(--runtime "$runtime")
# Root podman raises a container's open-files and processes limits to its own maximums, which fails
# ("setrlimit … Operation not permitted") where the machine's hard limits are lower.
limits=(--ulimit "nofile=${CONTAINER_NOFILE:-$(ulimit -Hn)}" --ulimit "nproc=${CONTAINER_NPROC:-4096}")
pod() { podman "${podman_global[@]}" "$@"; }

cleanup() {
  for c in "${containers[@]}"; do pod rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  pod volume rm -f "$volume" >/dev/null 2>&1 || true
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for c in "${containers[@]}"; do
    echo "--- log of $c" >&2
    pod logs "$c" 2>&1 | grep -v RouterExplorer | tail -n 30 >&2 || true
  done
  exit 1
}
ok() { echo "ok: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

default_base="the Dockerfile's default base"
echo "building $image from ${base:-$default_base} ..."
started="$(now)"
pod build --format docker "${build_args[@]}" "${limits[@]}" -t "$image" . >"/tmp/$name-build.log" 2>&1 ||
  { tail -n 40 "/tmp/$name-build.log" >&2; fail "podman build"; }
echo "measure: build_seconds $(since "$started")"
echo "measure: image_bytes $(pod image inspect --format '{{.Size}}' "$image")"
rm -f "/tmp/$name-build.log"

# The production image holds run-time dependencies only.
pod run --rm --user root "${limits[@]}" "$image" sh -c '
  found="$(find / -xdev \( -path "*/node_modules/typescript" -o -path "*/node_modules/ts-node" -o -path "*/node_modules/mjml" \) -print)"
  [ -z "$found" ] || { echo "$found"; exit 1; }
  ! node -e "require.resolve(\"typescript\")" 2>/dev/null && ! node -e "require.resolve(\"ts-node\")" 2>/dev/null
' || fail "the image contains typescript or ts-node"
ok "no typescript, no ts-node in the image"

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
api="http://127.0.0.1:$port"
pod volume create "$volume" >/dev/null

# Starts the service on the volume; PORT inside the container is the published one, so the HEALTHCHECK
# and the logs name the same port.
start_service() {
  containers+=("$1")
  pod run -d --name "$1" "${limits[@]}" -p "127.0.0.1:$port:3000" -v "$volume:/data" \
    -e JWT_SECRET=container-test-secret-at-least-32-characters-long -e LOG_LEVEL=info "$image" >/dev/null
  local t0
  t0="$(now)"
  for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$api/health" || true)" = 200 ] && {
      echo "measure: start_to_healthy_seconds $(since "$t0")"
      return 0
    }
    [ "$(pod inspect --format '{{.State.Running}}' "$1")" = true ] || fail "$1 exited before it was healthy"
    sleep 0.2
  done
  fail "$1 not healthy after 60 s"
}

# POST with a JSON body; prints the body, then the status on a line of its own.
post() { curl -s -w '\n%{http_code}' -X POST "$api$1" -H 'Content-Type: application/json' "${@:3}" -d "$2"; }
expect_status() { [ "$(tail -n 1 <<<"$2")" = "$1" ] || fail "expected $1, got: $2"; }
field() { head -n 1 <<<"$1" | node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8'))$2"; }

start_service "$name-1"
ok "/health 200 with the embedded database on a volume"

email="ada-$$@example.com"
password="correct horse battery"
login() { post /auth/login "{\"email\":\"$email\",\"password\":\"$password\"}"; }
expect_status 200 "$(post /auth/register "{\"email\":\"$email\"}")"
# Without SMTP_URL the mail is written to the log, as the README's walk-through shows.
token=""
for _ in $(seq 1 100); do
  token="$(pod logs "$name-1" 2>&1 | grep "\"to\":\"$email\"" | grep -o 'register/complete?token=[A-Za-z0-9_-]*' |
    tail -n 1 | cut -d= -f2 || true)"
  [ -n "$token" ] && break
  sleep 0.2
done
[ -n "$token" ] || fail "no registration mail in the log"
expect_status 201 "$(post /auth/register/complete \
  "{\"token\":\"$token\",\"password\":\"$password\",\"nickname\":\"Ada\"}")"
login="$(login)"
expect_status 200 "$login"
jwt="$(field "$login" .token)"
expect_status 201 "$(post /classes '{"name":"Physics 101"}' -H "Authorization: Bearer $jwt")"
ok "register, login and an authenticated call"

pod exec "$name-1" node dist/cli/main.js --help | grep -q 'schools:add' || fail "CLI --help"
pod exec "$name-1" node dist/cli/main.js schools:add "Container High $$" >/dev/null || fail "CLI schools:add"
curl -s "$api/schools?q=Container" | grep -q "Container High $$" || fail "the school added by the CLI"
ok "the operator CLI beside the running service, on its database"

# Without systemd podman cannot schedule the HEALTHCHECK (it logs "unable to get systemd connection" at each
# start, harmlessly); run on demand, the check works all the same.
pod healthcheck run "$name-1" >/dev/null || fail "the image's HEALTHCHECK"
ok "HEALTHCHECK healthy"

t0="$(now)"
pod stop -t 30 "$name-1" >/dev/null
echo "measure: stop_seconds $(since "$t0")"
code="$(pod inspect --format '{{.State.ExitCode}}' "$name-1")"
[ "$code" = 0 ] || fail "exit status $code after SIGTERM"
ok "SIGTERM: exit status 0"

start_service "$name-3"
expect_status 200 "$(login)"
ok "a new container on the volume finds the account again"

# A second service on the volume, in a PID namespace of its own, while the first runs: it must refuse to
# start (one embedded PostgreSQL per cluster: the cluster lock holds across PID namespaces) and the first
# must keep serving.
containers+=("$name-4")
pod run -d --name "$name-4" "${limits[@]}" -v "$volume:/data" \
  -e JWT_SECRET=container-test-secret-at-least-32-characters-long "$image" >/dev/null
code="$(timeout 90 podman "${podman_global[@]}" wait "$name-4" || echo running)"
[ "$code" != running ] || fail "a second service on the same volume started"
[ "$code" != 0 ] || fail "the second service exited with status 0"
expect_status 200 "$(login)"
ok "a second container on the same volume refuses to start; the first keeps serving"

pod stop -t 30 "$name-3" >/dev/null
echo "container test passed"
