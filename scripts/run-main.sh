#!/usr/bin/env bash
# The main job: set up the machine if needed, then run the seed-000 study
# (matrices/binlog.yaml) end to end. Extra arguments go to `rmatrix run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec target/release/rmatrix run matrices/binlog.yaml "$@"
