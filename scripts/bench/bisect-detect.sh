#!/usr/bin/env bash
# How often `rmatrix bisect --paired` names a small planted slowdown: Debian's Redis source as
# a repository (scripts/redis-source-repo.sh) with `slow GET` spinning SPIN_US microseconds per
# GET, bisected from its first commit to its last, TRIES times. A try tells when bisect exits 0
# and names `slow GET`. Prints one row per try and the count.
#
# Usage: scripts/bench/bisect-detect.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-bisect-detect;
#      deleted first), SPIN_US (1), TRIES (10), ROUNDS (10, per batch), MAX_ROUNDS (30),
#      SCAN_UP_TO (16: the seven commits are scanned in one run; 0 bisects in paired steps),
#      LENGTH (3s), THRESHOLD (5%), METRIC (comma-separated; default bisect's own),
#      LOCK (flock file serialising Docker users, default /tmp/docker-tests.lock), DUET (1:
#      `--duet`, each step's two sides at the same time; bisected in steps, no scan).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/bench/redis-source-lib.sh"
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-bisect-detect}
SPIN_US=${SPIN_US:-1} TRIES=${TRIES:-10} ROUNDS=${ROUNDS:-10} MAX_ROUNDS=${MAX_ROUNDS:-30}
SCAN_UP_TO=${SCAN_UP_TO:-16} LENGTH=${LENGTH:-3s} THRESHOLD=${THRESHOLD:-5%}
LOCK=${LOCK:-/tmp/docker-tests.lock}
METRIC=${METRIC:-}
metric_args=()
[ -n "$METRIC" ] && metric_args=(--metric "$METRIC")
scan_args=(--scan-up-to "$SCAN_UP_TO")
[ "${DUET:-}" = 1 ] && scan_args=(--duet) SCAN_UP_TO="none (--duet)"

rm -rf "$OUT" && mkdir -p "$OUT"
"$ROOT/scripts/redis-source-repo.sh" "$OUT/redis" "$SPIN_US" > "$OUT/commits"
first=$(head -1 "$OUT/commits" | cut -d' ' -f1)
last=$(tail -1 "$OUT/commits" | cut -d' ' -f1)
slow=$(grep ' slow GET$' "$OUT/commits" | cut -d' ' -f1)
# GET only: the commits' SET code is the same, and every cell is measured on every build.
redis_source_matrix bisect-detect "$OUT/redis" "$LENGTH" get > "$OUT/m.yaml"
echo "| try | exit | seconds | first bad commit | told |"
echo "|---:|---:|---:|---|---|"
told=0
for i in $(seq 1 "$TRIES"); do
  start=$(date +%s)
  set +e
  flock "$LOCK" "$RMATRIX" bisect "$OUT/m.yaml" --paired --good "$first" --bad "$last" \
    ${metric_args[@]+"${metric_args[@]}"} --rounds "$ROUNDS" --max-rounds "$MAX_ROUNDS" \
    "${scan_args[@]}" --threshold "$THRESHOLD" \
    --out "$OUT/try-$i" > "$OUT/try-$i.out" 2> "$OUT/try-$i.err"
  code=$?
  set -e
  secs=$(( $(date +%s) - start ))
  named=$(grep -o 'First bad commit: [^`]*`[0-9a-f]*`' "$OUT/try-$i.out" | head -1 || true)
  ok=no
  if [[ $code == 0 && $named == *"\`$slow\`"* ]]; then
    ok=yes
    told=$((told + 1))
  fi
  echo "| $i | $code | $secs | ${named#First bad commit: } | $ok |"
done
echo
echo "bisect named slow GET: $told of $TRIES (SPIN_US=$SPIN_US, scan up to $SCAN_UP_TO, rounds $ROUNDS per batch up to $MAX_ROUNDS, length $LENGTH, threshold $THRESHOLD, metrics ${METRIC:-bisect default})"
