#!/usr/bin/env bash
# Make Docker usable on a fresh Debian machine: install and start the engine when none
# answers, then make sure the debian:* base images exist (pulled when a registry is
# reachable, otherwise seeded from Debian's package repository with mmdebstrap).
# Idempotent: every step checks first. Usage: containers/setup-docker.sh [suite ...]
set -euo pipefail

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie)

log() { echo "setup-docker: $*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if ! docker info >/dev/null 2>&1; then
  command -v dockerd >/dev/null 2>&1 || apt_install docker.io
  if ! docker info >/dev/null 2>&1; then
    if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
      as_root systemctl start docker || true
    fi
  fi
  if ! docker info >/dev/null 2>&1; then
    log "starting dockerd (log: /var/log/rmatrix-dockerd.log)"
    # Started without the descriptors this script inherited: a daemon holding one (say a
    # `flock` lock around the set-up) would hold it for as long as it runs.
    (
      for fd in /proc/"$BASHPID"/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
      done
      as_root sh -c 'setsid nohup dockerd >/var/log/rmatrix-dockerd.log 2>&1 < /dev/null &'
    )
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  fi
  docker info >/dev/null 2>&1 || { log "dockerd did not come up:"; tail -20 /var/log/rmatrix-dockerd.log >&2; exit 3; }
fi

for suite in "${suites[@]}"; do
  image="debian:${suite}"
  docker image inspect "$image" >/dev/null 2>&1 && continue
  if timeout 60 docker pull -q "$image" >/dev/null 2>&1; then
    log "pulled $image"
    continue
  fi
  log "no registry reachable; seeding $image from Debian's package repository"
  apt_install mmdebstrap
  # Unstable (sid) publishes a Release file whose valid-until date may have passed; the
  # option is also kept in the image's apt configuration for the builds that use it.
  aptopt=()
  [ "$suite" = sid ] && aptopt=(--aptopt='Acquire::Check-Valid-Until "false"')
  mmdebstrap --quiet --variant=minbase "${aptopt[@]}" "$suite" - | docker import - "$image" >/dev/null
  log "seeded $image"
done
