#!/usr/bin/env bash
# Detection power and false alarms of the side-by-side design (`rmatrix ab`: both builds in
# one run, shuffled rounds, paired verdicts, batches added while a cell cannot tell),
# calibrated with slowdowns planted in real source. power.sh calibrates compare of two runs.
#
# The builds: Debian's Redis 7.0.15 source as a repository (scripts/redis-source-repo.sh), one
# per slowdown, whose `slow GET` commit adds N rounds of a fixed loop to every GET (`work:N`,
# the same work on every machine); SET's code never changes. Every repository's first commit
# is the same tree, so it is built once.
#
#   1. truth: one matrix with the first commit and every slowdown's `slow GET` as servers, in
#      TRUTH_ROUNDS shuffled rounds with a fresh server each: each slowdown's true effect on
#      GET is the ratio of its qps to the same round's first commit (`rmatrix ratio`).
#   2. trials: TRIALS times, for every design of DESIGNS, `rmatrix ab` of the first commit
#      against itself (A/A) and against each slowdown's `slow GET`, in turn.
#   3. count, per design: A/A false alarms per cell (every SET cell, and GET in the A/A runs:
#      a verdict of regressed or improved on any judged metric), and per slowdown how often
#      GET was judged regressed (on any judged metric, on qps, on server CPU per operation).
#
# Prints Markdown tables. Trials already complete in OUT are kept (delete OUT to measure
# afresh); the counting is redone every time. Meant to run while other work shares the host,
# as a nightly job's does.
#
# Usage: scripts/bench/power-ab.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-power-ab), LOCK
#      (flock file serialising Docker users, default /tmp/docker-tests.lock), WORK ("15 37 75":
#      loop rounds per GET, about 2%, 5% and 10% of its user-space instructions, far less of
#      its CPU time: docs/compare.md), TRIALS (5),
#      TRUTH_ROUNDS (20), DESIGNS ("10/30/6m": rounds per batch/most rounds/budget, and
#      "/duet" for duet rounds (`ab --duet`); space separated), LENGTH (3s), THRESHOLD (5%).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/bench/redis-source-lib.sh"
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-power-ab}
LOCK=${LOCK:-/tmp/docker-tests.lock}
WORK=${WORK:-15 37 75} TRIALS=${TRIALS:-5} TRUTH_ROUNDS=${TRUTH_ROUNDS:-20}
DESIGNS=${DESIGNS:-10/30/6m} LENGTH=${LENGTH:-3s} THRESHOLD=${THRESHOLD:-5%}
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
if [ ! -f "$OUT/truth/manifest.json" ]; then
  {
    echo "name: power-ab-truth"
    echo "servers:"
    redis_source_server base "$first_repo" "$first"
    for n in $WORK; do redis_source_server "work$n" "${repo[$n]}" "${slow[$n]}"; done
    cells
    echo "iterations: $TRUTH_ROUNDS"
    echo "repeat: {restart: true, order: shuffled}"
  } >"$OUT/truth.yaml"
  rm -rf "$OUT/truth"
  flock "$LOCK" "$RMATRIX" run "$OUT/truth.yaml" --out "$OUT/truth" --quiet >"$OUT/truth.log" 2>&1 ||
    { echo "the truth run failed:" >&2; cat "$OUT/truth.log" >&2; exit 1; }
fi
# Each round's qps (or CPU per operation) of `server` and of `base`, one pair per line.
pairs() { # server workload metric
  python3 - "$OUT/truth/results.csv" "$1" "$2" "$3" <<'PY'
import csv, sys
_, path, server, workload, metric = sys.argv
rows = [r for r in csv.DictReader(open(path)) if r["status"] == "ok" and r["workload"] == workload]
base = {r["iteration"]: r[metric] for r in rows if r["server"] == "base"}
for r in rows:
    if r["server"] == server and base.get(r["iteration"]):
        print(r[metric], base[r["iteration"]])
PY
}
effect() { # json from rmatrix ratio
  python3 -c 'import json,sys
j=json.loads(sys.argv[1]); f=lambda x: "%+.1f%%" % ((x-1)*100)
print("%s [%s, %s] (n=%d)" % (f(j["geomean"]), f(j["low"]), f(j["high"]), j["n"]))' "$1"
}
declare -A truth
{
  echo "| loop rounds per GET | GET qps | GET server CPU per op | SET qps |"
  echo "|---:|---|---|---|"
  for n in $WORK; do
    q=$(effect "$(pairs "work$n" get qps | "$RMATRIX" ratio)")
    c=$(effect "$(pairs "work$n" get srv_cpu_us_per_op | "$RMATRIX" ratio)")
    s=$(effect "$(pairs "work$n" set qps | "$RMATRIX" ratio)")
    truth[$n]=${q%% *}
    echo "| $n | $q | $c | $s |"
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
      rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
      if [ "$n" = 0 ]; then
        m=$first_repo b=$first
      else
        m=${repo[$n]} b=${slow[$n]}
      fi
      {
        echo "name: power-ab"
        echo "servers:"
        redis_source_server redis "$m" HEAD
        cells
      } >"$OUT/trial.yaml"
      flock "$LOCK" "$RMATRIX" ab "$OUT/trial.yaml" --a "$first" --b "$b" ${duet[@]+"${duet[@]}"} --rounds "$rounds" \
        --max-rounds "$most" --budget "$budget" --threshold "$THRESHOLD" --out "$dir" \
        >"$dir.log" 2>&1 || [ -f "$dir/ab.json" ] ||
        { echo "ab $dir failed:" >&2; cat "$dir.log" >&2; exit 1; }
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
echo "Redis 7.0.15 built from source, pinned to CPU 1 (a duet design: side A on CPU 0, B on 1); GET and SET at 4 clients on 10,000 keys, $LENGTH a round"
echo "after 300 ms, a fresh server every round, threshold $THRESHOLD, judged on qps and server CPU per operation."
echo
echo "### True effect of each slowdown ($TRUTH_ROUNDS shuffled rounds of all builds together)"
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
