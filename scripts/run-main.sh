#!/usr/bin/env bash
# The main job: set up what it needs if needed (scripts/setup-main.sh: the Docker engine,
# base images, a build), then run the seed-000 study (matrices/binlog.yaml) end to end.
# Extra arguments go to `rmatrix run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-main.sh
exec target/release/rmatrix run matrices/binlog.yaml "$@"
