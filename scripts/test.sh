#!/usr/bin/env bash
# The test suite: set up the machine if needed; the patch, layer, format and lint checks; then
# unit tests and the integration tests against real servers in Docker, one test at a time
# (2 cores: never many servers at once).
set -euo pipefail
cd "$(dirname "$0")/.."
RMATRIX_BUILD_TARGETS=--all-targets scripts/setup.sh
scripts/check-patch.sh
scripts/check-layers.sh
scripts/check-families.sh
scripts/check-docs.sh
scripts/longest-fns.sh
cargo fmt --check
# Release profile: the tests below reuse its build of the dependencies.
cargo clippy --release --all-targets -- -D warnings
cargo test --release -- --test-threads=1
