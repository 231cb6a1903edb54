#!/bin/bash
# Builds the Dockerfile with podman and runs the image as `docker run --read-only --tmpfs /tmp -v data:/data`
# would: read-only root, the image's own user, environment, working directory and command. On demand, as root:
#   bash test/container/check-image.sh
# Needs podman, debootstrap and openssl (Debian: apt-get install podman debootstrap). Where Docker Hub cannot be reached,
# it stands in for node:20-bookworm-slim: Debian bookworm from the Debian mirror plus this machine's Node 20 and npm.
# Where podman's OCI runtime cannot start containers (a sandbox that may not set rlimits), the build runs with
# --isolation=chroot and the run uses a read-only bind mount and chroot in a mount namespace of its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in podman debootstrap unshare chroot curl openssl; do
  command -v "$tool" > /dev/null || { echo "check-image: $tool is missing (apt-get install podman debootstrap)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "check-image: run it as root (mounts and chroot)" >&2; exit 2; }

BASE=docker.io/library/node:20-bookworm-slim
TAG=localhost/churnscope:check
PORT=${PORT:-3311}
WORK=$(mktemp -d /tmp/churnscope-image-XXXXXX)
pass=0 fail=0
check() { if eval "$2"; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1" >&2; fail=$((fail + 1)); fi; }

if ! podman image exists "$BASE" && ! podman pull -q "$BASE" > /dev/null 2>&1; then
  echo "check-image: $BASE cannot be pulled; building a stand-in from Debian bookworm and this machine's Node"
  [[ "$(node -v)" == v20.* ]] || { echo "check-image: the stand-in needs Node 20 here, found $(node -v)" >&2; exit 2; }
  root="$WORK/base"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian > "$WORK/debootstrap.log"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules" "$root/usr/local/include"
  cp "$(command -v node)" "$root/usr/local/bin/node"
  cp -a "$(npm root -g)/npm" "$root/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # node-gyp cannot fetch Node's headers without the internet; this machine's npm may sit behind its own CA.
  cp -a "$(dirname "$(command -v node)")/../include/node" "$root/usr/local/include/"
  mkdir -p "$root/etc/ssl/certs" && cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/host-ca.crt"
  chroot "$root" groupadd -g 1000 node && chroot "$root" useradd -u 1000 -g node -m node
  tar -C "$root" -c . | podman import -q \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca.crt' --change 'ENV npm_config_cafile=/etc/ssl/certs/host-ca.crt' \
    --change 'ENV npm_config_nodedir=/usr/local' \
    - "$BASE" > /dev/null
  rm -rf "$root"
fi

git clone -q . "$WORK/src"
start=$(date +%s)
podman build -q --isolation=chroot --pull=never -t "$TAG" "$WORK/src" > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log" >&2; exit 1; }
echo "built $TAG in $(( $(date +%s) - start )) s: $(podman image inspect "$TAG" --format '{{.Size}}' | awk '{printf "%.0f MB", $1 / 1e6}')"

config() { podman image inspect "$TAG" --format "$1"; }
image_root=$(podman image mount "$TAG")
user=$(config '{{.Config.User}}')
uid=$(awk -F: -v u="$user" '$1 == u { print $3 ":" $4 }' "$image_root/etc/passwd")
mapfile -t env < <(config '{{range .Config.Env}}{{println .}}{{end}}' | grep -v '^PORT=' | grep .)
command=$(config '{{join .Config.Cmd " "}}')
workdir=$(config '{{.Config.WorkingDir}}')
volume=$(config '{{range $k, $v := .Config.Volumes}}{{$k}}{{end}}')
check "runs as a non-root user ($user = $uid)" '[ -n "$uid" ] && [ "${uid%%:*}" != 0 ]'
check "declares the data volume ($volume)" '[ "$volume" = /data ]'

data="$WORK/data" mnt="$WORK/root"
mkdir -p "$data" "$mnt" && chown "$uid" "$data"
# The config file sets server.tls, as the audit webhook needs (the API server sends its token only over https).
TLS_PORT=$((PORT + 1)) TOKEN=image-check-token
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$data/tls.key" -out "$data/tls.crt" -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost 2> /dev/null
chown "$uid" "$data/tls.key" "$data/tls.crt"
printf 'server:\n  tls: { port: %s, certFile: /data/tls.crt, keyFile: /data/tls.key }\naudit:\n  webhookToken: { env: AUDIT_TOKEN }\n' "$TLS_PORT" > "$data/churnscope.yaml"
# Runs a command line in the image as its user, from its working directory, with its environment.
run_in_image() {
  exec unshare --mount --pid --fork --mount-proc bash -c '
    set -e
    mount --bind "$1" "$2" && mount -o remount,bind,ro "$2"
    mount -t proc proc "$2/proc" && mount --rbind /dev "$2/dev" && mount -t tmpfs tmpfs "$2/tmp" && mount --bind "$3" "$2/data"
    root=$2 uid=$4 workdir=$5 command=$6; shift 6
    exec chroot --userspec="$uid" "$root" /usr/bin/env -i HOME=/tmp "$@" /bin/sh -c "cd $workdir && exec $command"
  ' _ "$image_root" "$mnt" "$data" "$uid" "$workdir" "$1" "${env[@]}" "PORT=$PORT" CHURNSCOPE_CONFIG=/data/churnscope.yaml "AUDIT_TOKEN=$TOKEN"
}
(run_in_image "$command") > "$WORK/server.log" 2>&1 &
server=$!
# The server is the first process of unshare's PID namespace (unshare itself ignores SIGTERM while it waits):
# when it ends, the namespace ends.
stop_server() { kill "$(ps -o pid= --ppid "$server")" 2> /dev/null; wait "$server" 2> /dev/null || true; podman image unmount "$TAG" > /dev/null; }
trap stop_server EXIT
for _ in $(seq 1 60); do curl -sf "localhost:$PORT/healthz" > /dev/null && break; sleep 0.5; done

check "/healthz answers 200" '[ "$(curl -s -o /dev/null -w "%{http_code}" "localhost:$PORT/healthz")" = 200 ]'
check "/readyz answers 200 with a writable data dir" 'curl -sf "localhost:$PORT/readyz" | grep -q "\"dataDir\":\"writable\""'
location=$(curl -s -o /dev/null -w '%{redirect_url}' "localhost:$PORT/")
check "/ opens the embedded replay ($location)" '[[ "$location" == *snapshot=replay* ]]'
check "the replay's panels answer" 'curl -sf "localhost:$PORT/api/panels/writes-by-resource?snapshot=replay&${location#*\?}" | grep -q "\"status\":\"success\""'
check "the replay's objects answer (their store is built in the volume)" 'curl -sf "localhost:$PORT/api/objects?snapshot=replay&${location#*\?}" | grep -q "\"total\":[1-9]" && [ -f "$data/snapshots/replay.sqlite" ]'
check "a note is stored in the volume" 'curl -sf -X POST -H "origin: http://localhost:$PORT" -H "content-type: application/json" -d "{\"timeMs\":1789000000000,\"text\":\"image check\"}" "localhost:$PORT/api/notes" > /dev/null && [ "$(stat -c %u "$data/notes.sqlite")" = "${uid%%:*}" ]'
batch='{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"image-1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/configmaps/c","verb":"update","user":{"username":"image-user"},"objectRef":{"resource":"configmaps","namespace":"default","name":"c","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-30T10:00:00.000000Z","stageTimestamp":"2026-11-30T10:00:00.005000Z"}]}'
webhook() { curl -s -o /dev/null -w "%{http_code}" --cacert "$data/tls.crt" -H "content-type: application/json" "$@" -d "$batch" "https://localhost:$TLS_PORT/api/audit/webhook/prod"; }
check "the audit webhook answers over https on server.tls's port, with its token only" '[ "$(webhook)" = 401 ] && [ "$(webhook -H "authorization: Bearer $TOKEN")" = 200 ]'
check "nothing was refused a write (EROFS, EACCES) on the read-only root" '! grep -qE "EROFS|EACCES|read-only file system" "$WORK/server.log"'

stop_server; trap - EXIT
[ "$fail" = 0 ] && rm -rf "$WORK" || tail -20 "$WORK/server.log" >&2
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
