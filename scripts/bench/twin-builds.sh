#!/usr/bin/env bash
# Whether two builds of the same bytes run at the same speed: Debian's Redis source as a
# repository (scripts/redis-source-repo.sh), its first commit against the next one (a README
# line: the same server binary, a different image), measured side by side with `rmatrix ab`
# RUNS times. Every true change is none, so a run whose mean per-round log-ratio B / A lies
# far from 0 (beyond its own standard error) carries an offset that restarts do not
# redraw: one that lives as long as the images' files do (their pages in the host's page
# cache). DROP_CACHES=1 drops the page cache every 0.5 s during the runs, so that each start
# reads its binary into fresh pages. Prints, per run and cell, the rounds, the mean log-ratio,
# its standard error and the spread.
#
# Usage: scripts/bench/twin-builds.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-twin-builds;
#      deleted first), RUNS (3), ROUNDS (10), LENGTH (3s), DROP_CACHES (0), LOCK (flock file
#      serialising Docker users, default /tmp/docker-tests.lock).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/bench/redis-source-lib.sh"
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-twin-builds}
RUNS=${RUNS:-3} ROUNDS=${ROUNDS:-10} LENGTH=${LENGTH:-3s} DROP_CACHES=${DROP_CACHES:-0}
LOCK=${LOCK:-/tmp/docker-tests.lock}
rm -rf "$OUT" && mkdir -p "$OUT"
"$ROOT/scripts/redis-source-repo.sh" "$OUT/redis" 1 > "$OUT/commits"
a=$(sed -n 1p "$OUT/commits" | cut -d' ' -f1)
b=$(sed -n 2p "$OUT/commits" | cut -d' ' -f1)
redis_source_matrix twin-builds "$OUT/redis" "$LENGTH" get set > "$OUT/m.yaml"
dropper=
if [ "$DROP_CACHES" = 1 ]; then
  (while sleep 0.5; do echo 1 > /proc/sys/vm/drop_caches; done) &
  dropper=$!
fi
trap '[ -n "$dropper" ] && kill "$dropper" 2>/dev/null; true' EXIT
echo "| run | cell | metric | rounds | mean log-ratio B/A | its standard error | spread (sd) |"
echo "|---:|---|---|---:|---:|---:|---:|"
for i in $(seq 1 "$RUNS"); do
  flock "$LOCK" "$RMATRIX" ab "$OUT/m.yaml" --a "$a" --b "$b" --rounds "$ROUNDS" \
    --max-rounds "$ROUNDS" --out "$OUT/run-$i" > "$OUT/run-$i.log" 2>&1 || true
  /usr/bin/python3 - "$OUT/run-$i/runs/batch-1/results.csv" "$i" <<'PY'
import csv, math, statistics as st, sys
by = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] == "ok":
        by.setdefault((r["workload"], r["iteration"]), {})[r["server"]] = r
for w in ["get", "set"]:
    for m in ["qps", "srv_cpu_us_per_op"]:
        lr = [math.log(float(v["redis-b"][m]) / float(v["redis-a"][m]))
              for (wl, _), v in by.items() if wl == w and len(v) == 2]
        sd = st.stdev(lr)
        print(f"| {sys.argv[2]} | {w} | {m} | {len(lr)} | {st.mean(lr):+.3f} | {sd / math.sqrt(len(lr)):.3f} | {sd:.3f} |")
PY
done
