#!/usr/bin/env bash
# A Docker registry on 127.0.0.1:5000 (Debian's docker-registry package), for the test of
# `image:` pulled by reference. Docker treats 127.0.0.0/8 registries as insecure (plain
# HTTP) by default, so no daemon setting is needed. Idempotent. Usage:
#   containers/local-registry.sh start     install (when missing) and start it
#   containers/local-registry.sh status    exit 0 when it answers
set -euo pipefail

addr=127.0.0.1:5000
conf=/etc/rmatrix/registry.yml
data=/var/lib/rmatrix-registry
log=/var/log/rmatrix-registry.log
# A daemon must not keep the descriptors it was started with: a caller under
# `flock /tmp/rmatrix-docker.lock` would otherwise leave the lock held by the daemon forever.
close_inherited() {
  local fd
  for fd in /proc/"$BASHPID"/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
  done
}
say() { echo "local-registry: $*" >&2; }
answers() { curl -fsS "http://$addr/v2/" >/dev/null 2>&1; }

start() {
  answers && return 0
  if ! command -v docker-registry >/dev/null 2>&1; then
    say "installing docker-registry"
    env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
    # The package's own service would listen on every address: it is not started here.
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-registry curl >/dev/null
  fi
  mkdir -p "$(dirname "$conf")" "$data"
  # Loopback only, no authentication, deletes allowed (a test removes what it pushed).
  cat >"$conf" <<CONF
version: 0.1
storage:
  filesystem:
    rootdirectory: $data
  delete:
    enabled: true
http:
  addr: $addr
CONF
  say "starting on $addr (log: $log)"
  (close_inherited; exec setsid nohup docker-registry serve "$conf" >>"$log" 2>&1 </dev/null) &
  for _ in $(seq 1 30); do answers && return 0; sleep 0.5; done
  say "the registry did not come up:"; tail -20 "$log" >&2; exit 3
}

case "${1:-}" in
  start) start ;;
  status) answers ;;
  *) echo "usage: $0 start | status" >&2; exit 2 ;;
esac
