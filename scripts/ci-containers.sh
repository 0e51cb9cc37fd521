#!/usr/bin/env bash
# Make the container sandbox usable on a Debian machine without Docker or a registry:
#   1. install podman, runc and debootstrap when missing (root + apt only),
#   2. configure /etc/containers/containers.conf (runc: crun fails on hybrid cgroups here;
#      finite ulimits so a fork bomb meets a ceiling even before the pids limit),
#   3. build localhost/skillsmith-base:bookworm from Debian with debootstrap, only if missing,
#   4. start the Docker-compatible API service on a Unix socket and wait until /_ping answers.
# Idempotent: a second run finds the image and a live socket and does nothing.
set -euo pipefail

image="${SKILLSMITH_BASE_IMAGE:-localhost/skillsmith-base:bookworm}"
socket="${SKILLSMITH_PODMAN_SOCKET:-/run/podman/podman.sock}"
mirror="${SKILLSMITH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
packages="python3,python3-pytest,nodejs,git,ca-certificates"

log() { echo "ci-containers: $*" >&2; }

if [ "$(id -u)" != "0" ]; then
  log "must run as root (rootful podman is what the container sandbox is tested with)"
  exit 1
fi

missing=()
for tool in podman:podman runc:runc debootstrap:debootstrap curl:curl; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

conf=/etc/containers/containers.conf
if [ -e "$conf" ] && ! grep -qs 'skillsmith' "$conf"; then
  # Someone else's configuration: do not overwrite it.
  log "leaving existing $conf as is (crun fails on hybrid cgroups: it may need runtime = \"runc\")"
elif [ ! -e "$conf" ]; then
  log "writing $conf"
  mkdir -p /etc/containers
  cat >"$conf" <<'EOF'
# written by skillsmith scripts/ci-containers.sh
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
EOF
fi

if podman image exists "$image"; then
  log "base image $image present"
else
  started=$(date +%s)
  root=$(mktemp -d /var/tmp/skillsmith-base.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  log "building $image with debootstrap (bookworm, minbase + $packages)"
  debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >/dev/null
  # Cache-free image: the apt lists and package archives only add size.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
  tar -C "$root" -c . | podman import --quiet --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
  rm -rf "$root"
  trap - EXIT
  log "built $image in $(($(date +%s) - started)) s"
fi

ping_socket() {
  curl -fsS --max-time 2 --unix-socket "$socket" http://d/_ping >/dev/null 2>&1
}

if ping_socket; then
  log "API already answering on $socket"
else
  mkdir -p "$(dirname "$socket")"
  rm -f "$socket"
  log "starting podman system service on unix://$socket"
  # setsid + nohup: the service must outlive this script (CI runs the tests after it returns).
  # From /: conmon leaves marker files (e.g. "oom") in the service's working directory.
  (cd / && exec setsid nohup podman system service --time=0 "unix://$socket") \
    >/var/log/skillsmith-podman.log 2>&1 </dev/null &
  for _ in $(seq 1 100); do
    if ping_socket; then break; fi
    sleep 0.1
  done
  if ! ping_socket; then
    log "podman API did not answer on $socket; see /var/log/skillsmith-podman.log"
    exit 1
  fi
  log "API answering on $socket"
fi
