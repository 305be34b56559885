#!/usr/bin/env bash
# How often `rmatrix ab` tells a small planted slowdown: Debian's Redis source as a repository
# (scripts/redis-source-repo.sh) with `slow GET` spinning SPIN_US microseconds per GET, its
# first commit against the culprit, TRIES times. Each try must flag GET regressed and SET
# neither regressed nor improved (SET's code is unchanged: a within-run control). Prints one
# row per try and the count.
#
# Usage: scripts/bench/ab-detect.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-ab-detect; deleted
#      first), SPIN_US (1), TRIES (10), ROUNDS (10, per batch), MAX_ROUNDS (30), BUDGET (6m),
#      LENGTH (3s), THRESHOLD (5%), METRIC (comma-separated; default ab's own: qps and
#      srv_cpu_us_per_op), LOCK (flock file serialising Docker users, default
#      /tmp/docker-tests.lock), AB_ARGS (more arguments of `rmatrix ab`, e.g. --duet).
# A try tells when GET regressed on some judged metric and SET neither regressed nor improved
# on any.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/bench/redis-source-lib.sh"
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-ab-detect}
SPIN_US=${SPIN_US:-1} TRIES=${TRIES:-10} ROUNDS=${ROUNDS:-10} MAX_ROUNDS=${MAX_ROUNDS:-30}
BUDGET=${BUDGET:-6m} LENGTH=${LENGTH:-3s} THRESHOLD=${THRESHOLD:-5%}
LOCK=${LOCK:-/tmp/docker-tests.lock}
METRIC=${METRIC:-}
read -r -a ab_args <<< "${AB_ARGS:-}"
metric_args=()
[ -n "$METRIC" ] && metric_args=(--metric "$METRIC")
rm -rf "$OUT" && mkdir -p "$OUT"
"$ROOT/scripts/redis-source-repo.sh" "$OUT/redis" "$SPIN_US" > "$OUT/commits"
first=$(head -1 "$OUT/commits" | cut -d' ' -f1)
slow=$(grep ' slow GET$' "$OUT/commits" | cut -d' ' -f1)
redis_source_matrix ab-detect "$OUT/redis" "$LENGTH" get set > "$OUT/m.yaml"
# One row per try: exit code, seconds, then GET's and SET's verdicts, one per judged metric
# ("metric: verdict change [interval] (rounds)", separated by "; ").
verdict() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = []
for c in d["changes"]:
    if c["dims"]["workload"] != sys.argv[2]:
        continue
    iv = "n/a" if c["change_pct"] is None else f'{c["change_pct"]:+.1f}% [{c["ci_low_pct"]:+.1f}%, {c["ci_high_pct"]:+.1f}%]'
    rows.append(f'{c["metric"]}: {c["verdict"]} {iv} ({c["rounds"]} rounds)')
print("; ".join(rows) if rows else "none")
PY
}
echo "| try | exit | seconds | GET | SET | told |"
echo "|---:|---:|---:|---|---|---|"
told=0
for i in $(seq 1 "$TRIES"); do
  start=$(date +%s)
  set +e
  flock "$LOCK" "$RMATRIX" ab "$OUT/m.yaml" --a "$first" --b "$slow" ${metric_args[@]+"${metric_args[@]}"} \
    ${ab_args[@]+"${ab_args[@]}"} --rounds "$ROUNDS" --max-rounds "$MAX_ROUNDS" --budget "$BUDGET" --threshold "$THRESHOLD" \
    --out "$OUT/try-$i" > "$OUT/try-$i.out" 2> "$OUT/try-$i.err"
  code=$?
  set -e
  secs=$(( $(date +%s) - start ))
  get=$(verdict "$OUT/try-$i/ab.json" get 2>/dev/null || echo "none")
  set_=$(verdict "$OUT/try-$i/ab.json" set 2>/dev/null || echo "none")
  ok=no
  if [[ $get == *": regressed"* && $set_ != *": regressed"* && $set_ != *": improved"* ]]; then
    ok=yes
    told=$((told + 1))
  fi
  echo "| $i | $code | $secs | $get | $set_ | $ok |"
done
echo
echo "GET flagged and SET not: $told of $TRIES (metrics ${METRIC:-ab default}, SPIN_US=$SPIN_US, rounds $ROUNDS per batch up to $MAX_ROUNDS, budget $BUDGET, length $LENGTH, threshold $THRESHOLD)"
