#!/usr/bin/env bash
# Where the spread of side-by-side rounds comes from: an A/A run (one build as two servers
# of one matrix, so every true change is none) of Redis GET, and the spread of its
# per-round log-ratios B / A (the standard deviation a paired verdict's interval scales
# with) beside each side's own coefficient of variation. Vary one thing at a time.
#
# Usage: scripts/bench/aa-spread.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-aa-spread; deleted
#      first), ROUNDS (12), LENGTH (1s), RESTART (true: a fresh server each round), CLIENTS (4),
#      PIPELINE (1), WARMUP (300ms), BUILD (redis-7.0, from containers/builds.yaml), TASKSET (a CPU list to
#      run rmatrix, the client, on; empty: anywhere), DUET (1: duet rounds, a on CPU 0 and b on
#      CPU 1 at the same time, each client beside its server; default: one at a time, both
#      on CPU 1).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-aa-spread}
ROUNDS=${ROUNDS:-12} LENGTH=${LENGTH:-1s} RESTART=${RESTART:-true} CLIENTS=${CLIENTS:-4}
PIPELINE=${PIPELINE:-1} WARMUP=${WARMUP:-300ms} BUILD=${BUILD:-redis-7.0} TASKSET=${TASKSET:-}
DUET=${DUET:-}
cpu_a=1 duet=""
[ "$DUET" = 1 ] && cpu_a=0 duet="duet: true, "
rm -rf "$OUT" && mkdir -p "$OUT"
cat > "$OUT/m.yaml" <<YAML
name: aa-spread
servers:
  a: {build: $BUILD, cpuset: "$cpu_a"}
  b: {build: $BUILD, cpuset: "1"}
configs:
  plain: {redis_conf: {appendonly: "no", save: ""}}
workloads:
  get: {redis: {test: get, keyspace: 10000, pipeline: $PIPELINE}}
concurrency: [$CLIENTS]
iterations: $ROUNDS
warmup: $WARMUP
length: $LENGTH
repeat: {${duet}restart: $RESTART, order: shuffled, seed: 7}
YAML
run=("$RMATRIX" run "$OUT/m.yaml" --out "$OUT/run" --quiet)
[ -n "$TASKSET" ] && run=(taskset -c "$TASKSET" "${run[@]}")
"${run[@]}" > "$OUT/run.log" 2>&1
/usr/bin/python3 - "$OUT/run/results.csv" <<'PY'
import csv, math, statistics as st, sys
by = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] == "ok":
        by.setdefault(r["server"], {})[int(r["iteration"])] = r
a, b = by["a"], by["b"]
rounds = sorted(set(a) & set(b))
for m in ["qps", "srv_cpu_us_per_op"]:
    lr = [math.log(float(b[i][m]) / float(a[i][m])) for i in rounds]
    cv = lambda side: st.stdev([float(side[i][m]) for i in rounds]) / st.mean([float(side[i][m]) for i in rounds])
    print(f"{m}: {len(lr)} rounds, log-ratio sd {st.stdev(lr):.3f}, mean {st.mean(lr):+.3f}; "
          f"CV of A {cv(a):.3f}, of B {cv(b):.3f}")
PY
