#!/usr/bin/env bash
# The test suite: set up the machine if needed, then unit tests and the integration tests
# against real servers in Docker, one test at a time (2 cores: never many servers at once).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/check-patch.sh
scripts/check-layers.sh
scripts/check-families.sh
cargo test --release -- --test-threads=1
