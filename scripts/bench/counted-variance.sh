#!/usr/bin/env bash
# How much the counted instructions of one build vary: the same counted matrix (Redis 7.0 from
# containers/redis, GET and SET at 1 client, ITERATIONS iterations of LENGTH operations) run RUNS
# times, each run a fresh server. Prints, per workload, every iteration's instructions per
# operation (timer work set apart) pooled over the runs: n, mean, sd, CV, min, max, and the
# spread of the runs' means.
#
# Usage: scripts/bench/counted-variance.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-counted-variance;
#      deleted first), RUNS (10), ITERATIONS (3), LENGTH (20000), RESTART (false: one server per
#      run; true: one per iteration).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-counted-variance}
RUNS=${RUNS:-10} ITERATIONS=${ITERATIONS:-3} LENGTH=${LENGTH:-20000} RESTART=${RESTART:-false}
rm -rf "$OUT" && mkdir -p "$OUT"
cat > "$OUT/m.yaml" <<YAML
name: counted-variance
servers:
  redis-7.0: {build: {dir: $ROOT/containers/redis, args: {suite: bookworm, package: redis-server}}}
configs:
  plain: {redis_conf: {save: ""}}
workloads:
  get: {redis: {test: get, keyspace: 1000, data_size: 32}}
  set: {redis: {test: set, keyspace: 1000, data_size: 32}}
concurrency: [1]
iterations: $ITERATIONS
repeat: {restart: $RESTART}
warmup: 500
length: $LENGTH
counted: callgrind
report: {metric: srv_instr_per_op}
YAML
for i in $(seq "$RUNS"); do
  "$RMATRIX" run "$OUT/m.yaml" --quiet --out "$OUT/run-$i" >/dev/null
  echo "run $i of $RUNS done" >&2
done
"$ROOT/scripts/bench/counted-table.py" $(for i in $(seq "$RUNS"); do echo "$OUT/run-$i"; done)
