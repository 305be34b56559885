#!/usr/bin/env bash
# How much the counted instructions of one build vary: the same counted matrix (Redis 7.0 from
# containers/redis, GET and SET at 1 client, ITERATIONS iterations of LENGTH operations; or with
# SERVER=postgres, PostgreSQL 15's oltp point select and read-only transaction) run RUNS
# times, each run a fresh server. Prints, per workload, every iteration's instructions per
# operation (timer work set apart) pooled over the runs: n, mean, sd, CV, min, max, and the
# spread of the runs' means.
#
# Usage: scripts/bench/counted-variance.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-counted-variance;
#      deleted first), RUNS (10), ITERATIONS (3), LENGTH (20000; postgres 2000), RESTART (false:
#      one server per run; true: one per iteration), SERVER (redis or postgres).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-counted-variance}
RUNS=${RUNS:-10} ITERATIONS=${ITERATIONS:-3} RESTART=${RESTART:-false} SERVER=${SERVER:-redis}
rm -rf "$OUT" && mkdir -p "$OUT"
case $SERVER in
  redis)
    LENGTH=${LENGTH:-20000}
    cat > "$OUT/m.yaml" <<YAML
servers:
  redis-7.0: {build: {dir: $ROOT/containers/redis, args: {suite: bookworm, package: redis-server}}}
configs:
  plain: {redis_conf: {save: ""}}
workloads:
  get: {redis: {test: get, keyspace: 1000, data_size: 32}}
  set: {redis: {test: set, keyspace: 1000, data_size: 32}}
YAML
    ;;
  postgres)
    LENGTH=${LENGTH:-2000}
    cat > "$OUT/m.yaml" <<YAML
servers:
  postgres-15: {build: {dir: $ROOT/containers/postgres, args: {suite: bookworm}}}
configs:
  default: {postgresql_conf: {autovacuum: "off"}}
workloads:
  point-select: {oltp: {test: oltp_point_select, tables: 1, table_size: 10000}}
  read-only: {oltp: {test: oltp_read_only, tables: 1, table_size: 10000}}
YAML
    ;;
  *) echo "SERVER is redis or postgres" >&2; exit 2 ;;
esac
cat >> "$OUT/m.yaml" <<YAML
name: counted-variance
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
