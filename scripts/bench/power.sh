#!/usr/bin/env bash
# Detection power and false alarms of `rmatrix compare`, calibrated with slowdowns of known size.
#
# The injection is the server container's CPU quota (`cpus:` in the matrix) on a Redis server
# pinned to one core (`cpuset`) and driven hard enough that its quota, not the client, sets the
# throughput. The baseline has a quota too (BASE_CPUS): on a shared 2-core host the share of a
# core an unlimited server gets moves with the neighbours' load, and a quota above that share
# would inject nothing; below it, throughput follows the quota.
#
#   1. truth: one matrix with the baseline server and one server per slowdown, interleaved with a
#      fresh container per round (TRUTH_ITER rounds): the true effect of each quota is the ratio
#      of each round's injected qps to the same round's baseline qps (`rmatrix ratio`).
#   2. rounds: ROUNDS times, a baseline run and an injected run (the slowdowns in turn), each
#      ITER iterations: the runs a nightly gate would compare.
#   3. judge: every design in DESIGN_ITERS (run copies keeping iterations <= k of results.csv)
#      x noise (none, or --noise-from a store of the other baseline runs) x THRESHOLDS, with
#      `rmatrix compare --format csv`, verdicts read per cell:
#        A/A: every pair of baseline runs; a cell judged improved or regressed is a false alarm.
#        detection: every baseline run against every injected run; a cell must be `regressed`.
#      The pairs share runs, so they are not independent trials: the counts say how often the
#      gate erred over these runs, and the runs behind them are printed with them.
# It prints Markdown tables. Runs already complete in OUT are reused (the script is idempotent;
# delete OUT to measure afresh); the judging is redone every time.
#
# Usage: scripts/bench/power.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-power), LOCK (flock
#      file serialising Docker users, default /tmp/docker-tests.lock), ROUNDS (8), ITER (10),
#      TRUTH_ITER (6), LENGTH (3s), WARMUP (500ms), BASE_CPUS (0.3), SLOWDOWNS ("2 5 10 20", in
#      %), DESIGN_ITERS ("3 5 10"), THRESHOLDS ("5%"), CONFIDENCE (95%), COMPARE_FLAGS (extra
#      flags for every compare, e.g. "--assume-run-noise 3").
set -euo pipefail
cd "$(dirname "$0")/../.."
RMATRIX=${RMATRIX:-${CARGO_TARGET_DIR:-target}/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-power}
LOCK=${LOCK:-/tmp/docker-tests.lock}
ROUNDS=${ROUNDS:-8}
ITER=${ITER:-10}
TRUTH_ITER=${TRUTH_ITER:-6}
LENGTH=${LENGTH:-3s}
WARMUP=${WARMUP:-500ms}
BASE_CPUS=${BASE_CPUS:-0.3}
SLOWDOWNS=${SLOWDOWNS:-2 5 10 20}
DESIGN_ITERS=${DESIGN_ITERS:-3 5 10}
THRESHOLDS=${THRESHOLDS:-5%}
CONFIDENCE=${CONFIDENCE:-95%}
COMPARE_FLAGS=${COMPARE_FLAGS:-}
read -r -a extra <<<"$COMPARE_FLAGS"

# Set-up checks: a built binary that knows `cpus:`, a reachable engine, python3 for the CSVs.
[ -x "$RMATRIX" ] || { echo "no $RMATRIX: run cargo build --release (or scripts/setup.sh)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read compare's CSV" >&2; exit 2; }
docker info >/dev/null 2>&1 || { echo "the Docker engine is not reachable (scripts/setup.sh)" >&2; exit 3; }
for k in $DESIGN_ITERS; do
  [ "$k" -le "$ITER" ] || { echo "DESIGN_ITERS $k exceeds ITER $ITER" >&2; exit 2; }
done
mkdir -p "$OUT/runs" "$OUT/derived" "$OUT/stores"
started=$(date +%s)

# The quota of a slowdown of s%: the baseline's quota less s%.
quota() { python3 -c "print(round($BASE_CPUS * (1 - $1 / 100), 4))"; }

# A matrix; its servers are "name=cpus" pairs. The cells: three Redis tests on a small keyspace
# (1000 keys: each request costs the same from the first second on; a growing keyspace or
# list made the cost per request drift within an iteration), pipelined so that the server does
# more work per request than the client (the CPU table shows the server at its quota).
matrix() { # iterations server=cpus ...
  local iters=$1
  shift
  echo "name: power"
  echo "description: detection power of compare (scripts/bench/power.sh)"
  echo "servers:"
  for s in "$@"; do
    echo "  ${s%%=*}:"
    echo "    build: {dir: $(pwd)/containers/redis, args: {suite: bookworm, package: redis-server}}"
    echo "    cpuset: \"1\""
    echo "    cpus: ${s#*=}"
  done
  cat <<YAML
configs:
  default: {redis_conf: {save: "", appendonly: "no"}}
workloads:
  set-p16: {redis: {test: set, keyspace: 1000, pipeline: 16}}
  get-p16: {redis: {test: get, keyspace: 1000, pipeline: 16}}
  incr-p16: {redis: {test: incr, keyspace: 1000, pipeline: 16}}
concurrency: [8]
iterations: $iters
warmup: $WARMUP
length: $LENGTH
repeat: {restart: true, order: interleaved}
report: {metric: qps, rows: [workload], columns: [server]}
YAML
}

# Run a matrix into dir unless a complete run of the same matrix is already there. An
# interrupted run (it has `finished_at` too) is resumed; one of other settings is redone.
run() { # matrix-file dir
  if cmp -s "$1" "$2/matrix.yaml" && [ -f "$2/manifest.json" ]; then
    python3 -c '
import json, re, sys
m = json.load(open(sys.argv[1]))
iters = int(re.search(r"^iterations: (\d+)$", open(sys.argv[2]).read(), re.M).group(1))
sys.exit(0 if m["iterations_ok"] >= m["cells_planned"] * iters else 1)' "$2/manifest.json" "$1" && return
    flock "$LOCK" "$RMATRIX" run --resume "$2" --quiet >>"$2.log" 2>&1 \
      || { echo "resume of $2 failed (exit $?):" >&2; cat "$2.log" >&2; exit 1; }
    return
  fi
  rm -rf "$2"
  # Its output goes to a log, shown when the run fails.
  flock "$LOCK" "$RMATRIX" run "$1" --out "$2" --quiet >"$2.log" 2>&1 \
    || { echo "run $2 failed (exit $?):" >&2; cat "$2.log" >&2; exit 1; }
}

# --- 1. truth ---
truth_servers=("base=$BASE_CPUS")
for s in $SLOWDOWNS; do truth_servers+=("s$s=$(quota "$s")"); done
matrix "$TRUTH_ITER" "${truth_servers[@]}" >"$OUT/truth.yaml"
"$RMATRIX" plan "$OUT/truth.yaml" >/dev/null # refuses a bad quota before anything starts
run "$OUT/truth.yaml" "$OUT/truth"

# qps of `server` and of the baseline server, one round (iteration) of one cell per line.
pairs() { # server
  python3 - "$OUT/truth/results.csv" "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
base = {(r["workload"], r["iteration"]): r["qps"] for r in rows if r["server"] == "base"}
for r in rows:
    k = (r["workload"], r["iteration"])
    if r["server"] == sys.argv[2] and k in base:
        print(r["qps"], base[k])
PY
}
# Each server's CPU and the client's over the measured phase, as shares of a core: a
# server-bound cell has its server at its quota and its client below a core.
python3 - "$OUT/truth/results.csv" >"$OUT/cpu.md" <<'PY'
import csv, sys
from collections import defaultdict
acc = defaultdict(lambda: [0.0, 0.0, 0.0])
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] != "ok":
        continue
    a = acc[(r["server"], r["workload"])]
    a[0] += float(r["seconds"]); a[1] += float(r["srv_cpu_s"]); a[2] += float(r["client_cpu_s"] or 0)
print("| server | workload | server CPU (cores) | client CPU (cores) |")
print("|---|---|---:|---:|")
for (s, w), (sec, srv, cli) in acc.items():
    print(f"| {s} | {w} | {srv / sec:.3f} | {cli / sec:.3f} |")
PY

declare -A truth
{
  echo "| injected slowdown | quota (CPUs) | true effect on qps, $CONFIDENCE interval ($TRUTH_ITER rounds x 3 cells) |"
  echo "|---:|---:|---|"
  echo "| 0% | $BASE_CPUS | baseline |"
  for s in $SLOWDOWNS; do
    j=$(pairs "s$s" | "$RMATRIX" ratio --confidence "$CONFIDENCE")
    truth[$s]=$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%+.1f%%" % ((j["geomean"]-1)*100))' "$j")
    python3 -c 'import json,sys
j=json.loads(sys.argv[1])
f=lambda x: "%+.1f%%" % ((x-1)*100)
print("| %s%% | %s | %s [%s, %s] (n=%d) |" % (sys.argv[2], sys.argv[3], f(j["geomean"]), f(j["low"]), f(j["high"]), j["n"]))' \
      "$j" "$s" "$(quota "$s")"
  done
} >"$OUT/truth.md"

# --- 2. rounds: a baseline run, then an injected one, the slowdowns in turn ---
matrix "$ITER" "redis=$BASE_CPUS" >"$OUT/base.yaml"
for s in $SLOWDOWNS; do matrix "$ITER" "redis=$(quota "$s")" >"$OUT/s$s.yaml"; done
read -r -a slow <<<"$SLOWDOWNS"
bases=()
declare -A injected # slowdown -> run names
for r in $(seq 1 "$ROUNDS"); do
  s=${slow[$(((r - 1) % ${#slow[@]}))]}
  b=$(printf 'base-%02d' "$r")
  i=$(printf 's%s-%02d' "$s" "$r")
  run "$OUT/base.yaml" "$OUT/runs/$b"
  run "$OUT/s$s.yaml" "$OUT/runs/$i"
  bases+=("$b")
  injected[$s]="${injected[$s]:-} $i"
done
measured=$(($(date +%s) - started))

# --- 3. judge ---
# A copy of a run keeping iterations <= k: what a k-iteration design would have measured
# (the first k rounds of the same run). samples.csv is left out: compare reads it only for
# cells measured once.
derive() { # run k
  local d="$OUT/derived/k$2/$1"
  [ -f "$d/results.csv" ] && return
  mkdir -p "$d"
  cp -r "$OUT/runs/$1/manifest.json" "$OUT/runs/$1/matrix.yaml" "$OUT/runs/$1/servers" "$d/"
  python3 - "$OUT/runs/$1/results.csv" "$2" >"$d/results.csv" <<'PY'
import csv, sys
r = csv.DictReader(open(sys.argv[1]))
w = csv.DictWriter(sys.stdout, r.fieldnames, lineterminator="\n")
w.writeheader()
w.writerows(x for x in r if int(x["iteration"]) <= int(sys.argv[2]))
PY
}
for k in $DESIGN_ITERS; do
  for b in "${bases[@]}" ${injected[*]}; do derive "$b" "$k"; done
done

# The noise store of a compare: the k-iteration baseline runs other than the ones compared.
store() { # k run-to-leave-out ...
  local k=$1 dir
  shift
  dir="$OUT/stores/k$k-$(echo "$@" | tr ' ' '+')"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    for b in "${bases[@]}"; do
      case " $* " in *" $b "*) continue ;; esac
      ln -s "$OUT/derived/k$k/$b" "$dir/$b"
    done
  fi
  echo "$dir"
}

# Verdict counts of one compare: "cells flagged-any regressed" from compare's CSV.
judge() { # k noise(none|store) threshold baseline candidate
  local k=$1 args=(--format csv --confidence "$CONFIDENCE" --threshold "$3" "${extra[@]}")
  [ "$2" = store ] && args+=(--noise-from "$(store "$k" "$4" "$5")")
  local out
  out=$("$RMATRIX" compare "${args[@]}" "$OUT/derived/k$k/$4" "$OUT/derived/k$k/$5") \
    || [ $? -eq 4 ] || { echo "compare $4 $5 failed" >&2; exit 1; }
  printf '%s\n' "$out" | python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["metric"] == "qps"]
flag = sum(r["verdict"] in ("improved", "regressed") for r in rows)
reg = sum(r["verdict"] == "regressed" for r in rows)
print(len(rows), flag, reg)'
}

pct() { python3 -c "import sys; n,d=int(sys.argv[1]),int(sys.argv[2]); print(f'{n} of {d} ({100*n/d:.0f}%)' if d else '-')" "$1" "$2"; }

echo "## Calibration of \`rmatrix compare\` ($(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
echo
echo "Redis 7.0 pinned to CPU 1 (\`cpuset: \"1\"\`), 3 cells (set, get, incr on 1000 keys, pipeline 16, 8 connections),"
echo "$LENGTH per iteration after $WARMUP warm-up, a fresh container per iteration. Baseline quota \`cpus: $BASE_CPUS\`."
echo
echo "### True effect of each quota (truth run: the servers interleaved round by round)"
echo
cat "$OUT/truth.md"
echo
echo "### Server-bound: CPU used over the measured phase (truth run)"
echo
cat "$OUT/cpu.md"
echo
echo "### Verdicts: $ROUNDS baseline runs and $ROUNDS injected runs of $ITER iterations, confidence $CONFIDENCE${COMPARE_FLAGS:+, extra flags \`$COMPARE_FLAGS\`}"
echo
aa_pairs=$((${#bases[@]} * (${#bases[@]} - 1) / 2))
header="| iterations | noise | threshold | A/A false alarms per cell | A/A compares with any false alarm |"
rule="|---:|---|---:|---:|---:|"
for s in $SLOWDOWNS; do
  header+=" detected at $s% (true ${truth[$s]}) |"
  rule+="---:|"
done
echo "$header"
echo "$rule"
for k in $DESIGN_ITERS; do
  for noise in none store; do
    for t in $THRESHOLDS; do
      cells=0 flagged=0 compares=0 any=0
      for ((x = 0; x < ${#bases[@]}; x++)); do
        for ((y = x + 1; y < ${#bases[@]}; y++)); do
          read -r n f _ <<<"$(judge "$k" "$noise" "$t" "${bases[x]}" "${bases[y]}")"
          cells=$((cells + n)) flagged=$((flagged + f)) compares=$((compares + 1))
          [ "$f" -gt 0 ] && any=$((any + 1))
        done
      done
      line="| $k | $([ $noise = store ] && echo "$((${#bases[@]} - 2))-$((${#bases[@]} - 1)) runs" || echo none) | $t | $(pct $flagged $cells) | $(pct $any $compares) |"
      for s in $SLOWDOWNS; do
        total=0 caught=0
        for i in ${injected[$s]:-}; do
          for b in "${bases[@]}"; do
            read -r n _ g <<<"$(judge "$k" "$noise" "$t" "$b" "$i")"
            total=$((total + n)) caught=$((caught + g))
          done
        done
        line+=" $(pct $caught $total) |"
      done
      echo "$line"
    done
  done
done
echo
echo "A/A: all $aa_pairs pairs of the $ROUNDS baseline runs; detection: each of the $ROUNDS baseline runs against"
echo "each injected run of that slowdown (3 cells each). Noise \`store\`: \`--noise-from\` the other baseline runs."
echo "Runs measured in $((measured / 60)) min $((measured % 60)) s (0 if all were reused); elapsed $((($(date +%s) - started) / 60)) min; runs in $OUT."
