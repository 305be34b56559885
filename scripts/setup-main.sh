#!/usr/bin/env bash
# What the main job (scripts/run-main.sh, any `rmatrix run`) needs on a fresh Debian machine:
# a Docker engine and the base images its servers are built from (containers/setup-docker.sh),
# and a build of rmatrix. The tests and benchmarks need more: scripts/setup.sh.
# Idempotent: each step checks first.
#   scripts/setup-main.sh                  all of it, the build finished at the end
#   scripts/setup-main.sh --build-behind   the build left running (scripts/setup.sh, which
#                                          has more to set up meanwhile, waits for it)
set -euo pipefail
cd "$(dirname "$0")/.."

# The build first, behind the rest (scripts/build-behind.sh). The test suite (scripts/test.sh)
# asks for every target (RMATRIX_BUILD_TARGETS=--all-targets): its tests' dependencies turn on
# features of shared crates, and a build without them would be compiled a second time.
scripts/build-behind.sh start

containers/setup-docker.sh bookworm trixie bullseye sid

[ "${1:-}" = --build-behind ] || scripts/build-behind.sh wait
