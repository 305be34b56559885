#!/usr/bin/env bash
# Everything a fresh Debian machine needs before rmatrix runs: a Docker engine and base
# images (containers/setup-docker.sh), the peer tools rmatrix is compared with, and a build.
# Idempotent: each step checks first.
set -euo pipefail
cd "$(dirname "$0")/.."

containers/setup-docker.sh bookworm trixie bullseye sid

# Peers (sysbench, redis-benchmark, mariadb-slap), and chromium for the HTML report's
# browser test; socat for the pool tests' second engine (containers/second-engine.sh).
missing=()
for pkg in sysbench redis-tools mariadb-client chromium socat; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The pool tests' registry on 127.0.0.1:5000 (Debian's docker-registry; `image:` pulls).
containers/local-registry.sh start

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust from https://rustup.rs" >&2
  exit 1
fi
cargo build --release --quiet
