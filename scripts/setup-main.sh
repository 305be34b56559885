#!/usr/bin/env bash
# What the main job (scripts/run-main.sh, any `rmatrix run`) needs on a fresh Debian machine:
# a Docker engine and the base images its servers are built from (containers/setup-docker.sh),
# and a build of rmatrix. The tests and benchmarks need more: scripts/setup.sh.
# Idempotent: each step checks first.
set -euo pipefail
cd "$(dirname "$0")/.."

containers/setup-docker.sh bookworm trixie bullseye sid

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust from https://rustup.rs" >&2
  exit 1
fi
# The test suite (scripts/test.sh) asks for every target (RMATRIX_BUILD_TARGETS=--all-targets):
# its tests' dependencies turn on features of shared crates, and a build without them would
# be compiled a second time for the tests.
cargo build --release --quiet ${RMATRIX_BUILD_TARGETS:-}
