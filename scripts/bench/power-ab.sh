#!/usr/bin/env bash
# Detection power and false alarms of the side-by-side design (`rmatrix ab`: both builds in
# one run, shuffled rounds, paired verdicts, batches added while a cell cannot tell),
# calibrated with slowdowns planted in real source. power.sh calibrates compare of two runs.
#
# The builds: Debian's Redis 7.0.15 source as a repository (scripts/redis-source-repo.sh), one
# per slowdown, whose `slow GET` commit adds N rounds of a fixed loop to every GET (`work:N`);
# SET's code never changes. Every repository's first commit is the same tree, so it is built
# once. The loop is sized in CPU time, not in instructions: a GET costs the server 4-11 us of
# CPU here (user space and kernel), of which callgrind's 4,700 user-space instructions are a
# small part, so N is hundreds of rounds (docs/compare.md).
#
#   1. truth: a long duet of the first commit against each slowdown's `slow GET`
#      (TRUTH_ROUNDS rounds, no early stop): the true effect on GET's server CPU per operation.
#   2. trials: TRIALS times, for every design of DESIGNS, `rmatrix ab` of the first commit
#      against itself (A/A) and against each slowdown's `slow GET`, in turn.
#   3. count, per design: A/A false alarms per cell (every SET cell, and GET in the A/A runs:
#      a verdict of regressed or improved on any judged metric), and per slowdown how often
#      GET was judged regressed (on any judged metric, on qps, on server CPU per operation).
#
# A gate detects a change as large as its threshold about half the time, so THRESHOLD (2%)
# lies below the slowdowns it is meant to catch.
#
# Prints Markdown tables. Trials already complete in OUT are kept (delete OUT to measure
# afresh); the counting is redone every time. Meant to run while other work shares the host,
# as a nightly job's does.
#
# Usage: scripts/bench/power-ab.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-power-ab), LOCK
#      (flock file serialising Docker users, default /tmp/docker-tests.lock), WORK ("70 170 350":
#      loop rounds per GET), TRIALS (5), TRUTH_ROUNDS (40), DESIGNS ("10/30/6m": rounds per batch/most rounds/budget, and
#      "/duet" for duet rounds (`ab --duet`); space separated), LENGTH (3s), THRESHOLD (2%).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/bench/redis-source-lib.sh"
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-power-ab}
LOCK=${LOCK:-/tmp/docker-tests.lock}
WORK=${WORK:-70 170 350} TRIALS=${TRIALS:-5} TRUTH_ROUNDS=${TRUTH_ROUNDS:-40}
DESIGNS=${DESIGNS:-10/30/6m} LENGTH=${LENGTH:-3s} THRESHOLD=${THRESHOLD:-2%}
[ -x "$RMATRIX" ] || { echo "no $RMATRIX: run scripts/setup.sh" >&2; exit 2; }
docker info >/dev/null 2>&1 || { echo "the Docker engine is not reachable (scripts/setup.sh)" >&2; exit 3; }
mkdir -p "$OUT"
started=$(date +%s)

# One repository per slowdown; the first commit (the same tree in each) and `slow GET`.
declare -A repo slow
for n in $WORK; do
  repo[$n]=$OUT/repo-$n
  [ -d "${repo[$n]}" ] || "$ROOT/scripts/redis-source-repo.sh" "${repo[$n]}" "work:$n" >/dev/null
  slow[$n]=$(git -C "${repo[$n]}" log --format='%H %s' | sed -n 's/ slow GET$//p')
done
first_repo=${repo[${WORK%% *}]}
first=$(git -C "$first_repo" rev-list --max-parents=0 HEAD)

# The cells every run measures: GET (the planted change) and SET (unchanged: a control).
cells() { redis_source_cells "$LENGTH" get set; }

# --- 1. truth ---
# Each slowdown's true effect: a long duet of the first commit against its `slow GET`
# (TRUTH_ROUNDS rounds, no early stop), GET's server CPU per operation and qps.
ab_run() { # DIR A B ARGS...: `rmatrix ab` of one server built at A and at B
  local dir=$1 a=$2 b=$3 m=$first_repo w
  shift 3
  for w in $WORK; do [ "$b" = "${slow[$w]}" ] && m=${repo[$w]}; done
  rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
  {
    echo "name: power-ab"
    echo "servers:"
    redis_source_server redis "$m" HEAD
    cells
  } >"$dir.yaml"
  flock "$LOCK" "$RMATRIX" ab "$dir.yaml" --a "$a" --b "$b" "$@" --threshold "$THRESHOLD" --out "$dir" \
    >"$dir.log" 2>&1 || [ -f "$dir/ab.json" ] ||
    { echo "ab $dir failed:" >&2; cat "$dir.log" >&2; exit 1; }
}
# One cell's change in an ab.json: "+4.9% [+4.1%, +5.6%]".
change() { # ab.json workload metric
  python3 - "$@" <<'PY'
import json, sys
path, workload, metric = sys.argv[1:]
for c in json.load(open(path))["changes"]:
    if c["dims"]["workload"] == workload and c["metric"] == metric and c["change_pct"] is not None:
        print("%+.1f%% [%+.1f%%, %+.1f%%] (%d rounds)" % (c["change_pct"], c["ci_low_pct"], c["ci_high_pct"], c["rounds"]))
PY
}
declare -A truth
{
  echo "| loop rounds per GET | GET server CPU per op | GET qps | SET server CPU per op |"
  echo "|---:|---|---|---|"
  for n in $WORK; do
    dir=$OUT/truth/$n
    [ -f "$dir/ab.json" ] ||
      ab_run "$dir" "$first" "${slow[$n]}" --duet --rounds "$TRUTH_ROUNDS" --max-rounds "$TRUTH_ROUNDS"
    c=$(change "$dir/ab.json" get srv_cpu_us_per_op)
    truth[$n]=${c%% *}
    echo "| $n | $c | $(change "$dir/ab.json" get qps) | $(change "$dir/ab.json" set srv_cpu_us_per_op) |"
  done
} >"$OUT/truth.md"

# --- 2. trials ---
for t in $(seq 1 "$TRIALS"); do
  for d in $DESIGNS; do
    IFS=/ read -r rounds most budget mode <<<"$d"
    duet=()
    [ "${mode:-}" = duet ] && duet=(--duet)
    for n in 0 $WORK; do
      dir=$OUT/trials/$(echo "$d" | tr / -)/$n-$t
      [ -f "$dir/ab.json" ] && continue
      b=$first
      [ "$n" = 0 ] || b=${slow[$n]}
      ab_run "$dir" "$first" "$b" ${duet[@]+"${duet[@]}"} --rounds "$rounds" --max-rounds "$most" \
        --budget "$budget"
    done
  done
done
measured=$(($(date +%s) - started))

# --- 3. count ---
pct() { python3 -c "import sys; n,d=int(sys.argv[1]),int(sys.argv[2]); print(f'{n} of {d} ({100*n/d:.0f}%)' if d else '-')" "$1" "$2"; }
# "cells flagged" of a trial's A/A cells, and "any qps cpu" of its GET detection.
count() { # ab.json slowdown
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
aa = sys.argv[2] == "0"
cells, flagged = set(), set()
get = {}
for c in d["changes"]:
    w = c["dims"]["workload"]
    if w == "set" or aa:
        cells.add(w)
        if c["verdict"] in ("regressed", "improved"):
            flagged.add(w)
    if w == "get":
        get[c["metric"]] = c["verdict"] == "regressed"
print(len(cells), len(flagged), int(any(get.values())), int(get.get("qps", False)),
      int(get.get("srv_cpu_us_per_op", False)))
PY
}
echo "## Calibration of \`rmatrix ab\` ($(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
echo
echo "Redis 7.0.15 built from source (a duet design: side A on CPU 0, B on 1, trading every other round; the others: anywhere); GET and SET at 4 clients on 10,000 keys, $LENGTH a round"
echo "after 300 ms, a fresh server every round, threshold $THRESHOLD, judged on qps and server CPU per operation."
echo
echo "### True effect of each slowdown (a long duet each, its rounds in each row)"
echo
cat "$OUT/truth.md"
echo
echo "### Verdicts over $TRIALS trials per design and slowdown"
echo
header="| design (rounds/most/budget) | A/A false alarms per cell | A/A runs | median minutes per run |"
rule="|---|---:|---:|---:|"
for n in $WORK; do
  header+=" GET regressed at $n rounds (true ${truth[$n]}): any / qps / CPU per op |"
  rule+="---|"
done
echo "$header"
echo "$rule"
for d in $DESIGNS; do
  base=$OUT/trials/$(echo "$d" | tr / -)
  cells=0 flagged=0 aa=0 secs=()
  for f in "$base"/*/ab.json; do
    n=$(basename "$(dirname "$f")")
    read -r c fl _ <<<"$(count "$f" "${n%%-*}")"
    cells=$((cells + c)) flagged=$((flagged + fl))
    [ "${n%%-*}" = 0 ] && aa=$((aa + 1))
    secs+=("$(python3 -c 'import json,sys; print(sum(b["seconds"] for b in json.load(open(sys.argv[1]))["batches"]))' "$f")")
  done
  minutes=$(printf '%s\n' "${secs[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/60}')
  line="| $d | $(pct $flagged $cells) | $aa | $minutes |"
  for n in $WORK; do
    tot=0 any=0 q=0 c=0
    for f in "$base"/"$n"-*/ab.json; do
      [ -f "$f" ] || continue
      read -r _ _ a qq cc <<<"$(count "$f" "$n")"
      tot=$((tot + 1)) any=$((any + a)) q=$((q + qq)) c=$((c + cc))
    done
    line+=" $(pct $any $tot) / $q / $c |"
  done
  echo "$line"
done
echo
echo "A/A cells: every SET cell (its code never changes) and GET in the runs of the first commit"
echo "against itself. Runs measured in $((measured / 60)) min (0 if all were kept); runs in $OUT."
