#!/usr/bin/env bash
# rmatrix's redis `mixed` workload vs memtier_benchmark, side by side: one Redis 7.0 server (no
# persistence), memtier's default 1:10 SET:GET mix, 32-byte values, 100,000 keys drawn
# uniformly, 1 thread of 50 connections with 16 requests in flight each, the same total
# request count. The server is pinned to SERVER_CPU and both tools to CLIENT_CPU. Rounds
# alternate which tool goes first (round 1 rmatrix, round 2 memtier, ...). Per round:
# requests/s of each, client CPU per request (user + sys of the whole process, from the
# kernel's rusage as GNU time reads it, to the microsecond) and the server's CPU per request
# under that tool's load (the Redis container's cgroup CPU counter around the run); then the
# MEDIAN OF THE PER-ROUND RATIOS rmatrix / memtier.
#
# How each tool spells the load:
#   rmatrix  redis: {test: mixed, data_size: 32, keyspace: 100000, pipeline: 16} (ratio 1:10
#            is the default), concurrency 50, length = REQUESTS; keys `key:` + 12 digits
#   memtier  --threads=1 --clients=50 --pipeline=16 --ratio=1:10 --data-size=32
#            --key-pattern=R:R --key-minimum=1 --key-maximum=100000 (memtier refuses 0)
#            --distinct-client-seed (without it memtier seeds every client alike: all 50
#            send the same key sequence; on an empty server they SET the same ~1,800 keys and
#            96-98% of their GETs miss, a lighter load than rmatrix's, whose clients draw
#            their own keys: measured 2026-11-30, INFO keyspace_hits/misses)
#            --requests=REQUESTS/50 (per client); keys `memtier-` + the number
# Key names differ, so before the rounds both tools' 100,000 keys are written once (32-byte
# values, redis-cli --pipe): every GET of either tool hits; the server's keyspace_hits and
# keyspace_misses per run are printed with the count check, with what reached the server
# per request (requests per server read, bytes in and out, from INFO stats).
#
# Count check, every run: INFO commandstats before and after (redis-cli, outside the CPU
# window): SET calls must equal the tool's SET count and GET calls its GET count (memtier:
# "Sets"/"Gets" Count of ALL STATS in its JSON output; rmatrix: `writes` and `reads` of its
# results.csv row, whose `queries` is their sum, with `errors` 0). The other calls (AUTH per
# connection; rmatrix's INFO and CONFIG GET) are the tool's fixed overhead and printed. A
# difference prints MISMATCH with the numbers; the script goes on and exits 1 at the end.
#
# Usage: MEMTIER=/path/to/memtier_benchmark scripts/bench/bench-vs-memtier.sh [rounds, default 3]
# Env:   MEMTIER (default: memtier_benchmark on PATH), REQUESTS (total per run, a multiple of
#        50, default 4000000), SERVER_CPU / CLIENT_CPU (default 0 / 1), SETTLE (seconds of
#        rest before each run, default 1), RMATRIX (default: cargo build --release, then
#        target/release/rmatrix), COST (default 1; 0 skips the cost runs), COST_OPS /
#        COST_VG_OPS (requests of the smaller strace / callgrind run, default 200000 /
#        50000, multiples of 50; the other has twice as many).
# Cost per request, after the rounds (bench_cost in bench-vs-lib.sh): each tool under
# strace -c -f and under callgrind at two request counts; the marginal system calls and
# user-space instructions per request, so start-up and results cancel.
# Needs: memtier_benchmark (not packaged in Debian 12; docs/peers.md shows how to build it),
#        docker, redis-cli (apt-get install redis-tools),
#        taskset, python3.
# The server: image rmatrix-bench/redis-7.0 built from containers/redis (Debian bookworm's
# redis-server), host network on 127.0.0.1, labelled rmatrix.run=bench-vs-memtier, removed
# on exit.
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 memtier_benchmark or another tool missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

ROUNDS=${1:-3}
REQUESTS=${REQUESTS:-4000000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SETTLE=${SETTLE:-1}
COST_OPS=${COST_OPS:-200000}
COST_VG_OPS=${COST_VG_OPS:-50000}
CLIENTS=50
PIPELINE=16
KEYS=100000
NAME=rmatrix-bench-vs-memtier
LABEL=bench-vs-memtier
IMAGE=rmatrix-bench/redis-7.0

MEMTIER=${MEMTIER:-$(command -v memtier_benchmark || true)}
if [ -z "$MEMTIER" ] || [ ! -x "$MEMTIER" ]; then
  echo "memtier_benchmark not found: set MEMTIER=/path/to/memtier_benchmark (Debian 12 has no" >&2
  echo "package; docs/peers.md shows how to build it)" >&2
  exit 2
fi
for n in "$REQUESTS" "$COST_OPS" "$COST_VG_OPS"; do
  [ $((n % CLIENTS)) -eq 0 ] || { echo "REQUESTS, COST_OPS and COST_VG_OPS must be multiples of $CLIENTS" >&2; exit 2; }
done
bench_need redis-cli "apt-get install redis-tools"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
bench_rmatrix
bench_cost_need

WORK=$(mktemp -d /tmp/bench-vs-memtier.XXXXXX)
bench_start_redis
echo "server $IMAGE on CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; $MEMTIER; $RMATRIX" >&2

# Both tools' keys, once: GETs hit from the first run on, whichever tool goes first.
python3 - "$KEYS" <<'PY' | redis-cli -p "$PORT" --pipe >"$WORK/prefill.log"
import sys
n, v = int(sys.argv[1]), b"x" * 32
out = sys.stdout.buffer
for i in range(n):
    for k in (b"key:%012d" % i, b"memtier-%d" % (i + 1)):
        out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$32\r\n%s\r\n" % (len(k), k, v))
PY
echo "prefilled: $(redis-cli -p "$PORT" dbsize) keys" >&2

stats() { redis-cli -p "$PORT" info all | tr -d '\r' >"$1"; }

# Each prints "rate sets gets status" (the tool's own counts).
run_memtier() { # out [requests, default REQUESTS]
  # -a: memtier reads a password nowhere else (a throwaway one, this script's server).
  "${BENCH_WRAP[@]}" "$MEMTIER" --server=127.0.0.1 --port="$PORT" \
    --authenticate="$BENCH_REDIS_PASSWORD" --protocol=redis --threads=1 --clients="$CLIENTS" \
    --pipeline="$PIPELINE" --ratio=1:10 --data-size=32 --key-pattern=R:R --key-minimum=1 \
    --key-maximum="$KEYS" --distinct-client-seed --requests=$((${2:-$REQUESTS} / CLIENTS)) --hide-histogram \
    --json-out-file="$1.json" >"$1.log" 2>&1 || { echo "0 0 0 failed:exit-$?"; return; }
  python3 - "$1.json" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["ALL STATS"]
    print(s["Totals"]["Ops/sec"], s["Sets"]["Count"], s["Gets"]["Count"], "ok")
except (OSError, KeyError, ValueError) as e:
    print("0 0 0 failed:json")
PY
}
run_rmatrix() { # out [requests, default REQUESTS]
  cat >"$1.yaml" <<EOF
name: bench-vs-memtier
servers:
  redis: {kind: redis, external: {port: $PORT, password_env: BENCH_REDIS_PASSWORD}}
workloads:
  mixed: {redis: {test: mixed, data_size: 32, keyspace: $KEYS, pipeline: $PIPELINE}}
concurrency: [$CLIENTS]
length: ${2:-$REQUESTS}
EOF
  "${BENCH_WRAP[@]}" "$RMATRIX" run "$1.yaml" --out "$1" --quiet \
    >"$1.log" 2>&1 || true
  python3 - "$1/results.csv" <<'PY'
import csv, sys
try:
    r = next(csv.DictReader(open(sys.argv[1])))
except (OSError, StopIteration):
    print("0 0 0 no-results")
    sys.exit()
ok = r["status"] == "ok" and r["errors"] in ("", "0") and \
    int(r["writes"] or 0) + int(r["reads"] or 0) == int(r["queries"] or -1)
print(r["qps"] or 0, r["writes"] or 0, r["reads"] or 0,
      "ok" if ok else "failed:" + (r["error"] or "writes+reads!=queries").replace(" ", "_")[:200])
PY
}

# The cost runs (bench_cost): COUNT requests under BENCH_WRAP; prints "ok".
cost_rmatrix() { run_rmatrix "$2" "$1" | awk '{print $1, $2 + $3, $4}' | bench_cost_ok "$1"; }
cost_memtier() { run_memtier "$2" "$1" | awk '{print $1, $2 + $3, $4}' | bench_cost_ok "$1"; }

check() { # point round tool sets gets before after
  local text
  text=$(python3 - "$4" "$5" "$6" "$7" <<'PY'
import sys
sets, gets, before, after = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
def read(p):
    calls, stats = {}, {}
    for line in open(p):
        line = line.strip()
        if line.startswith("cmdstat_"):
            name, rest = line[8:].split(":", 1)
            calls[name] = int(dict(kv.split("=") for kv in rest.split(","))["calls"])
        elif line.split(":")[0] in ("keyspace_hits", "keyspace_misses", "total_reads_processed",
                                    "total_net_input_bytes", "total_net_output_bytes"):
            k, v = line.split(":")
            stats[k] = int(v)
    return calls, stats
(b, bs), (a, as_) = read(before), read(after)
d = {k: a[k] - b.get(k, 0) for k in a if a[k] != b.get(k, 0)}
# This script's own calls: the first INFO (counted once it ran) and the second connection's
# AUTH; the second INFO is not in its own output.
d["info"] = d.get("info", 0) - 1
d["auth"] = d.get("auth", 0) - 1
d = {k: v for k, v in d.items() if v}
got_set, got_get = d.pop("set", 0), d.pop("get", 0)
s = {k: as_[k] - bs[k] for k in as_}
over = " ".join(f"{k}={v}" for k, v in sorted(d.items())) or "none"
verdict = "ok" if (got_set, got_get) == (sets, gets) else "MISMATCH"
n = max(sets + gets, 1)
print(f"{verdict} tool {sets} SET + {gets} GET; server cmdstat_set {got_set}, cmdstat_get "
      f"{got_get}; GET hits {s['keyspace_hits']}, misses {s['keyspace_misses']}; other calls "
      f"(overhead): {over}; per request: {n / max(s['total_reads_processed'], 1):.1f} requests "
      f"per server read, {s['total_net_input_bytes'] / n:.1f} bytes in, "
      f"{s['total_net_output_bytes'] / n:.1f} bytes out")
PY
)
  bench_check "$1" "$2" "$3" "${text%% *}" "${text#* }"
}

run_one() { # tool round point
  local out="$WORK/$1-r$2" cpu0 cpu1 rate sets gets st
  sleep "$SETTLE"
  stats "$out.before"
  cpu0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  BENCH_WRAP=(bench_time "$out.time" taskset -c "$CLIENT_CPU")
  if [ "$1" = rmatrix ]; then
    read -r rate sets gets st < <(run_rmatrix "$out")
  else
    read -r rate sets gets st < <(run_memtier "$out")
  fi
  cpu1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  stats "$out.after"
  if [ "$st" != ok ]; then
    echo "$1 run failed ($st): $out.log" >&2
    tail -5 "$out.log" >&2
    exit 1
  fi
  check "$3" "$2" "$1" "$sets" "$gets" "$out.before" "$out.after"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$3" "$2" "$FIRST" "$1" "$rate" "$((sets + gets))" \
    "$(awk '{print $2 + $3}' "$out.time")" "$((cpu1 - cpu0))" >>"$WORK/runs.tsv"
}

point="mixed 1:10 c=$CLIENTS P=$PIPELINE n=$REQUESTS"
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) -eq 1 ]; then order="rmatrix memtier"; else order="memtier rmatrix"; fi
  FIRST=${order%% *}
  for tool in $order; do run_one "$tool" "$round" "$point"; done
  echo "done: round $round" >&2
done
bench_cost "$point" rmatrix cost_rmatrix
bench_cost "$point" memtier cost_memtier

echo "rmatrix redis mixed vs $("$MEMTIER" --version | head -1), server $(redis-cli -p "$PORT" info server | tr -d '\r' | sed -n 's/^redis_version:/Redis /p'), $KEYS keys (all present), 32-byte values"
echo
bench_report memtier request
bench_cost_report memtier request
bench_finish
