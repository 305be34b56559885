#!/usr/bin/env bash
# rmatrix's redis workload vs redis-benchmark, side by side: one Redis 7.0 server (no
# persistence), the same clients, pipeline, keyspace (-r 100000) and request count. The server
# is pinned to SERVER_CPU and both tools to CLIENT_CPU (as the redis-benchmark docs advise),
# so neither tool gains from where the scheduler puts it. Rounds alternate which tool goes
# first (round 1 rmatrix, round 2 redis-benchmark, ...). Per point and round: requests/s of
# each, client CPU per request (user + sys of the whole process, from the kernel's rusage as
# GNU time reads it, to the microsecond) and the server's CPU per request under that tool's
# load (the Redis container's cgroup CPU counter read before and after the run); then per
# point the MEDIAN OF THE PER-ROUND RATIOS rmatrix / redis-benchmark.
#
# Count check, every run: INFO commandstats before and after the run (read with redis-cli,
# outside the CPU window): the calls of the test's command (cmdstat_set / cmdstat_get) must
# equal the tool's own count (redis-benchmark: "N requests completed"; rmatrix: `queries` in
# results.csv, with `errors` 0). Everything else the server counted is the tool's fixed
# overhead and is printed with the check: redis-benchmark sends AUTH on each connection
# and CONFIG GET save / appendonly; rmatrix sends AUTH per connection, INFO (server,
# commandstats) and CONFIG GET to record the server. A difference prints MISMATCH with the
# numbers; the script goes on and exits 1 at the end.
#
# Usage: scripts/bench/bench-vs-redis-benchmark.sh [rounds, default 3]
# Env:   POINTS  "clients pipeline requests" triples separated by commas
#                (default "1 1 100000, 50 1 300000, 50 16 2000000"),
#        TESTS (default "set get"), SERVER_CPU / CLIENT_CPU (default 0 / 1),
#        SETTLE (seconds of rest before each run, default 1),
#        RMATRIX (default: cargo build --release, then target/release/rmatrix),
#        COST (default 1; 0 skips the cost runs), COST_OPS / COST_VG_OPS (requests of the
#        smaller strace / callgrind run, default 20000 / 5000; the other has twice as many).
# Cost per request, after each point's rounds (bench_cost in bench-vs-lib.sh): each tool
# under strace -c -f and under callgrind at two request counts; the marginal system calls and
# user-space instructions per request, so start-up and results cancel.
# Needs: docker, redis-benchmark and redis-cli (apt-get install redis-tools), taskset,
#        python3; strace and valgrind unless COST=0.
# The server: image rmatrix-bench/redis-7.0 built from containers/redis (Debian bookworm's
# redis-server), host network on 127.0.0.1, labelled rmatrix.run=bench-vs-redis-benchmark,
# removed on exit.
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 a missing tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

ROUNDS=${1:-3}
POINTS=${POINTS:-"1 1 100000, 50 1 300000, 50 16 2000000"}
TESTS=${TESTS:-"set get"}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SETTLE=${SETTLE:-1}
COST_OPS=${COST_OPS:-20000}
COST_VG_OPS=${COST_VG_OPS:-5000}
NAME=rmatrix-bench-vs-redis-benchmark
LABEL=bench-vs-redis-benchmark
IMAGE=rmatrix-bench/redis-7.0

bench_need redis-benchmark "apt-get install redis-tools"
bench_need redis-cli "apt-get install redis-tools"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
bench_rmatrix
bench_cost_need

WORK=$(mktemp -d /tmp/bench-vs-redis-benchmark.XXXXXX)
bench_start_redis
echo "server $IMAGE on CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; $RMATRIX" >&2

commandstats() { redis-cli -p "$PORT" info commandstats | tr -d '\r' >"$1"; }

# Each prints "rate count status" (count: the tool's own).
run_rb() { # test clients pipeline requests out
  # -a: redis-benchmark reads a password nowhere else (a throwaway one, this script's server).
  "${BENCH_WRAP[@]}" redis-benchmark -h 127.0.0.1 -p "$PORT" \
    -a "$BENCH_REDIS_PASSWORD" -c "$2" -P "$3" -n "$4" -r 100000 -t "$1" >"$5.log" 2>&1 \
    || { echo "0 0 failed:exit-$?"; return; }
  tr '\r' '\n' <"$5.log" | awk '/requests completed in/ {n = $1}
    /throughput summary:/ {r = $3}
    END { if (r > 0) print r, n, "ok"; else print 0, n + 0, "failed:no-summary" }'
}
run_rm() { # test clients pipeline requests out
  cat >"$5.yaml" <<EOF
name: bench-vs-redis-benchmark
servers:
  redis: {kind: redis, external: {port: $PORT, password_env: BENCH_REDIS_PASSWORD, may_reset: true}}
workloads:
  w: {redis: {test: $1, keyspace: 100000, pipeline: $3}}
concurrency: [$2]
length: $4
EOF
  "${BENCH_WRAP[@]}" "$RMATRIX" run "$5.yaml" --out "$5" --quiet \
    >"$5.log" 2>&1 || true
  python3 - "$5/results.csv" <<'PY'
import csv, sys
try:
    r = next(csv.DictReader(open(sys.argv[1])))
except (OSError, StopIteration):
    print("0 0 no-results")
    sys.exit()
ok = r["status"] == "ok" and r["errors"] in ("", "0")
print(r["qps"] or 0, r["queries"] or 0, "ok" if ok else "failed:" + r["error"].replace(" ", "_")[:200])
PY
}

# The cost runs (bench_cost): the point at COUNT requests under BENCH_WRAP; prints "ok".
cost_rm() { run_rm "$COST_TEST" "$COST_C" "$COST_P" "$1" "$2" | bench_cost_ok "$1"; }
cost_rb() { run_rb "$COST_TEST" "$COST_C" "$COST_P" "$1" "$2" | bench_cost_ok "$1"; }

check() { # point round tool test count before after
  local text
  text=$(python3 - "$4" "$5" "$6" "$7" <<'PY'
import sys
cmd, count, before, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def calls(p):
    out = {}
    for line in open(p):
        if line.startswith("cmdstat_"):
            name, rest = line.strip()[8:].split(":", 1)
            out[name] = int(dict(kv.split("=") for kv in rest.split(","))["calls"])
    return out
b, a = calls(before), calls(after)
d = {k: a[k] - b.get(k, 0) for k in a if a[k] != b.get(k, 0)}
# This script's own calls: the first INFO (counted once it ran, so in `after`) and the
# second connection's AUTH; the second INFO is not in its own output.
d["info"] = d.get("info", 0) - 1
d["auth"] = d.get("auth", 0) - 1  # the second redis-cli connection authenticates first
d = {k: v for k, v in d.items() if v}
got = d.pop(cmd, 0)
over = " ".join(f"{k}={v}" for k, v in sorted(d.items())) or "none"
verdict = "ok" if got == count else "MISMATCH"
print(f"{verdict} tool count {count}; server cmdstat_{cmd} calls {got}; other calls (overhead): {over}")
PY
)
  bench_check "$1" "$2" "$3" "${text%% *}" "${text#* }"
}

run_one() { # tool test clients pipeline requests round point
  local out="$WORK/$1-$2-c$3-p$4-r$6" cpu0 cpu1 rate count st
  sleep "$SETTLE"
  commandstats "$out.before"
  cpu0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  BENCH_WRAP=(bench_time "$out.time" taskset -c "$CLIENT_CPU")
  if [ "$1" = rmatrix ]; then
    read -r rate count st < <(run_rm "$2" "$3" "$4" "$5" "$out")
  else
    read -r rate count st < <(run_rb "$2" "$3" "$4" "$5" "$out")
  fi
  cpu1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  commandstats "$out.after"
  if [ "$st" != ok ]; then
    echo "$1 run failed ($st): $out.log" >&2
    tail -5 "$out.log" >&2
    exit 1
  fi
  check "$7" "$6" "$1" "$2" "$count" "$out.before" "$out.after"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$7" "$6" "$FIRST" "$1" "$rate" "$count" \
    "$(awk '{print $2 + $3}' "$out.time")" "$((cpu1 - cpu0))" >>"$WORK/runs.tsv"
}

IFS=, read -r -a points <<<"$POINTS"
for cfg in "${points[@]}"; do
  read -r c p n <<<"$cfg"
  for t in $TESTS; do
    point="$t c=$c P=$p n=$n"
    for round in $(seq "$ROUNDS"); do
      if [ $((round % 2)) -eq 1 ]; then order="rmatrix redis-benchmark"; else order="redis-benchmark rmatrix"; fi
      FIRST=${order%% *}
      for tool in $order; do run_one "$tool" "$t" "$c" "$p" "$n" "$round" "$point"; done
      echo "done: $point round $round" >&2
    done
    COST_TEST=$t COST_C=$c COST_P=$p
    bench_cost "$point" rmatrix cost_rm
    bench_cost "$point" redis-benchmark cost_rb
  done
done

echo "rmatrix redis vs $(redis-benchmark --version), server $(redis-cli -p "$PORT" info server | tr -d '\r' | sed -n 's/^redis_version:/Redis /p'), keyspace 100000, 3-byte values"
echo
bench_report redis-benchmark request
bench_cost_report redis-benchmark request
bench_finish
