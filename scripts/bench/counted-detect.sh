#!/usr/bin/env bash
# Issue 53's detection check of counted mode: a planted, fixed amount of extra work in Redis's
# GET handler (scripts/redis-source-repo.sh's `work:N`, about 1% of GET's instructions) and the
# three things it must show:
# - compare: a run of the commit before the planted one against a run of the planted one,
#   TRIES times (each pair fresh runs): GET regressed and SET not, on srv_instr_per_op.
# - A/A: AA pairs of runs of the commit before, compared: nothing flagged.
# - bisect on srv_instr_per_op (one run per step) between the first and the last commit,
#   BISECTS times: it names the planted commit.
# Prints one line per try, a count of each at the end, and the spread of the counts over every
# run of the commit before (counted-table.py); the runs stay in OUT.
#
# Usage: scripts/bench/counted-detect.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-counted-detect;
#      deleted first), WORK (7 rounds), TRIES (10), AA (20), BISECTS (10), ITERATIONS (3),
#      LENGTH (10000 operations), THRESHOLD (compare's --counted-threshold, default its own).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-counted-detect}
WORK=${WORK:-7} TRIES=${TRIES:-10} AA=${AA:-20} BISECTS=${BISECTS:-10}
ITERATIONS=${ITERATIONS:-3} LENGTH=${LENGTH:-10000}
threshold=()
[ -n "${THRESHOLD:-}" ] && threshold=(--counted-threshold "$THRESHOLD")
rm -rf "$OUT" && mkdir -p "$OUT"
"$ROOT/scripts/redis-source-repo.sh" "$OUT/redis" "work:$WORK" >"$OUT/commits.txt"
first=$(sed -n 1p "$OUT/commits.txt" | cut -d' ' -f1)
before=$(sed -n 4p "$OUT/commits.txt" | cut -d' ' -f1)
planted=$(grep ' slow GET$' "$OUT/commits.txt" | cut -d' ' -f1)
last=$(tail -1 "$OUT/commits.txt" | cut -d' ' -f1)
cat >"$OUT/m.yaml" <<YAML
name: counted-detect
params:
  rev: {type: string, default: HEAD}
servers:
  redis: {source: {git: $OUT/redis, rev: "\${rev}", recipe: redis, flags: [USE_SYSTEM_JEMALLOC=yes]}}
configs:
  plain: {redis_conf: {appendonly: "no", save: ""}}
workloads:
  get: {redis: {test: get, keyspace: 1000, data_size: 32}}
  set: {redis: {test: set, keyspace: 1000, data_size: 32}}
concurrency: [1]
iterations: $ITERATIONS
warmup: 500
length: $LENGTH
counted: callgrind
report: {metric: srv_instr_per_op}
YAML
run() { "$RMATRIX" run "$OUT/m.yaml" --quiet --set "rev=$1" --out "$OUT/$2" >/dev/null; }
# compare's verdict and change of each workload's srv_instr_per_op (the report metric).
judge() {
  "$RMATRIX" compare "${threshold[@]}" --format json "$1" "$2" >"$3" || true
  python3 - "$3" <<'PY'
import json, sys
changes = json.load(open(sys.argv[1]))[0]["changes"]
print(", ".join(sorted(f'{c["dims"]["workload"]} {c["verdict"]} {c["change_pct"]:+.3f}%' for c in changes)))
PY
}
declare -i hits=0 aa_ok=0 bisect_ok=0
for i in $(seq "$TRIES"); do
  run "$before" "before-$i"
  run "$planted" "planted-$i"
  line=$(judge "$OUT/before-$i" "$OUT/planted-$i" "$OUT/compare-$i.json")
  [[ $line == *"get regressed"* && $line != *"set regressed"* && $line != *"set improved"* ]] && hits+=1
  echo "compare $i: $line"
done
for i in $(seq "$AA"); do
  a="$OUT/before-$i"
  [ -d "$a" ] || run "$before" "before-$i"
  run "$before" "again-$i"
  line=$(judge "$a" "$OUT/again-$i" "$OUT/aa-$i.json")
  [[ $line != *regressed* && $line != *improved* && $line != *cannot* ]] && aa_ok+=1
  echo "A/A $i: $line"
done
for i in $(seq "$BISECTS"); do
  "$RMATRIX" bisect "$OUT/m.yaml" --good "$first" --bad "$last" --metric srv_instr_per_op \
    "${threshold[@]}" --out "$OUT/bisect-$i" >"$OUT/bisect-$i.md" 2>"$OUT/bisect-$i.log" || true
  named=$(grep -o 'First bad commit: .*`[0-9a-f]\{40\}`' "$OUT/bisect-$i.md" | grep -o '[0-9a-f]\{40\}' || echo none)
  [ "$named" = "$planted" ] && bisect_ok+=1
  echo "bisect $i: names ${named:0:12} (planted ${planted:0:12}), $(grep -c 'building and measuring' "$OUT/bisect-$i.log") runs"
done
echo
echo "compare flagged GET and not SET: $hits of $TRIES"
echo "A/A flagged nothing: $aa_ok of $AA"
echo "bisect named the planted commit: $bisect_ok of $BISECTS"
echo
echo "The commit before, every run (compare's and A/A's):"
"$ROOT/scripts/bench/counted-table.py" "$OUT"/before-* "$OUT"/again-*
