#!/usr/bin/env bash
# The test suite: set up the machine if needed; the patch, layer, format and lint checks; then
# unit tests and the integration tests against real servers in Docker, one test at a time
# (2 cores: never many servers at once). Each step's start is printed with the time since
# the suite began, so a slow CI run says where its minutes went.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf 'test.sh: +%dm%02ds %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

step "set-up"
# RMATRIX_SECOND_BUILD=check: the build after the one behind the set-up must compile nothing
# (scripts/build-behind.sh), or a fresh clone's second command would rebuild for minutes.
RMATRIX_BUILD_TARGETS=--all-targets RMATRIX_SECOND_BUILD=check scripts/setup.sh
step "checks"
scripts/check-patch.sh
scripts/check-layers.sh
scripts/check-families.sh
scripts/check-docs.sh
scripts/longest-fns.sh
cargo fmt --check
step "clippy"
# Release profile: the tests below reuse its build of the dependencies.
cargo clippy --release --all-targets -- -D warnings
step "tests"
cargo test --release -- --test-threads=1
step "done"
