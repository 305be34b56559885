#!/usr/bin/env bash
# How low can a client's CPU per operation go? The floor under issue 16's client-CPU target
# (rmatrix <= 0.8x the peer tool): two minimal C clients (scripts/bench/floor/*.c) that make the
# fewest system calls a closed-loop client can make (one blocking send, one blocking recv per
# operation; no parsing, no latency recording) run beside rmatrix and the peer tool, in
# rounds that rotate which of the three goes first, against one server pinned to SERVER_CPU
# (clients pinned to CLIENT_CPU):
#   Redis 7.0, 1 connection, GET and SET of 100,000 keys:  rmatrix redis, redis-benchmark, floor
#   MariaDB 10.11, 2 connections, mysqlslap's autoincrement write:
#                                                   rmatrix slap, mariadb-slap, floor
# Per point: each tool's median throughput, client and server CPU per operation, and the
# median of the per-round ratios to the peer tool. If the floor itself stays above 0.8x the
# peer, the target is out of reach for any client on this machine: the rest is the kernel's.
#
# Count check, every run: Redis: INFO commandstats calls of the command = the requests sent;
# MariaDB: Com_insert = the statements sent, plus 99 pre-populated rows for rmatrix and
# mariadb-slap (both make mysqlslap's table). A MISMATCH makes the script exit 1.
#
# Usage: scripts/bench/bench-floor.sh [rounds, default 3]
# Env:   REDIS_N (requests, default 100000), MYSQL_N (statements, default 20000),
#        SERVER_CPU / CLIENT_CPU (default 0 / 1), SETTLE (default 1), MARIADB_SLAP,
#        RMATRIX (default: cargo build --release, then target/release/rmatrix), CC (default cc).
# Needs: docker, cc, redis-benchmark and redis-cli, mariadb-slap, taskset, python3, the
#        rmatrix/mariadb-10.11 image (any matrix with `build: mariadb-10.11` makes it).
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 a missing tool or image.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

ROUNDS=${1:-3}
REDIS_N=${REDIS_N:-100000}
MYSQL_N=${MYSQL_N:-20000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SETTLE=${SETTLE:-1}
CC=${CC:-cc}
MARIADB_SLAP=${MARIADB_SLAP:-$(command -v mariadb-slap || echo mysqlslap)}
bench_need "$CC" "apt-get install gcc"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need redis-benchmark "apt-get install redis-tools"
bench_need redis-cli "apt-get install redis-tools"
bench_need "$MARIADB_SLAP" "apt-get install mariadb-client"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
MARIADB_IMAGE=$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 '^rmatrix/mariadb-10.11' || true)
[ -n "$MARIADB_IMAGE" ] || { echo "no rmatrix/mariadb-10.11 image: run a matrix with build: mariadb-10.11 first" >&2; exit 2; }
bench_rmatrix

WORK=$(mktemp -d /tmp/bench-floor.XXXXXX)
"$CC" -O2 -o "$WORK/redis-floor" scripts/bench/floor/redis-floor.c
"$CC" -O2 -o "$WORK/mysql-floor" scripts/bench/floor/mysql-floor.c
NAME=rmatrix-bench-floor-redis LABEL=bench-floor IMAGE=rmatrix-bench/redis-7.0
MYSQL_NAME=rmatrix-bench-floor-mariadb
bench_start_redis
trap 'docker rm -f "$NAME" "$MYSQL_NAME" >/dev/null 2>&1 || true' EXIT
: >"$WORK/floor.tsv"
RUN=0

# One run: rest, counters, CPU window around the client, counters, count check, a line in
# floor.tsv: point round tool ops/s client_us/op server_us/op.
measure() { # point round tool ops counters-fn check-fn command...
  RUN=$((RUN + 1))
  local point=$1 round=$2 tool=$3 ops=$4 counters=$5 verdict=$6 out="$WORK/run-$RUN" c0 c1
  shift 6
  sleep "$SETTLE"
  "$counters" "$out.before"
  c0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  bench_time "$out.time" taskset -c "$CLIENT_CPU" "$@" >"$out.log" 2>&1 \
    || { echo "$tool failed: $out.log" >&2; tail -5 "$out.log" >&2; exit 1; }
  c1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  "$counters" "$out.after"
  "$verdict" "$point" "$round" "$tool" "$out"
  read -r el u s _ <"$out.time"
  awk -v p="$point" -v r="$round" -v t="$tool" -v n="$ops" -v el="$el" -v u="$u" -v s="$s" \
    -v srv=$((c1 - c0)) 'BEGIN {
      printf "%s\t%s\t%s\t%.0f\t%.2f\t%.2f\n", p, r, t, n / el, 1e6 * (u + s) / n, srv / n }' \
    >>"$WORK/floor.tsv"
}
# Every round of one point: the three tools in rotated order, each through measure with the
# family's counters, check and command line (FAMILY_cmd sets CMD).
rounds() { # point ops family peer
  local round tool
  for round in $(seq "$ROUNDS"); do
    for tool in $(rotated "$round" rmatrix "$4" floor); do
      "${3}_cmd" "$tool" "$round"
      measure "$1" "$round" "$tool" "$2" "${3}_counters" "${3}_check" "${CMD[@]}"
    done
    echo "done: $1 round $round" >&2
  done
}
# Tools in the order of round r: rotate the list r-1 places.
rotated() { local r=$1; shift; local a=("$@") n=$#; for i in $(seq 0 $((n - 1))); do echo "${a[$(((i + r - 1) % n))]}"; done; }

# --- Redis --------------------------------------------------------------------------------
redis_counters() { redis-cli -p "$PORT" info commandstats | tr -d '\r' >"$1"; }
redis_check() { # point round tool out
  local text
  text=$(python3 - "$TEST" "$REDIS_N" "$4.before" "$4.after" <<'PY'
import sys
cmd, n, before, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def calls(p):
    return {l[8:].split(":")[0]: int(l.split("calls=")[1].split(",")[0]) for l in open(p) if l.startswith("cmdstat_")}
b, a = calls(before), calls(after)
got = a.get(cmd, 0) - b.get(cmd, 0)
print(("ok" if got == n else "MISMATCH"), f"sent {n}; server cmdstat_{cmd} calls {got}")
PY
)
  bench_check "$1" "$2" "$3" "${text%% *}" "${text#* }"
}
redis-benchmark -h 127.0.0.1 -p "$PORT" -a "$BENCH_REDIS_PASSWORD" -c 10 -P 16 -n 300000 \
  -r 100000 -t set -q >/dev/null 2>&1  # every key present, so GETs hit
redis_cmd() { # tool round
  case $1 in
    rmatrix) CMD=("$RMATRIX" run "$WORK/redis-$TEST.yaml" --out "$WORK/rm-$TEST-$2" --quiet) ;;
    redis-benchmark) CMD=(redis-benchmark -h 127.0.0.1 -p "$PORT" -a "$BENCH_REDIS_PASSWORD"
                          -c 1 -P 1 -n "$REDIS_N" -r 100000 -t "$TEST" -q) ;;
    floor) CMD=("$WORK/redis-floor" "$PORT" "$BENCH_REDIS_PASSWORD" "$REDIS_N" "$TEST") ;;
  esac
}
for TEST in get set; do
  point="redis $TEST c=1 n=$REDIS_N"
  cat >"$WORK/redis-$TEST.yaml" <<YAML
name: bench-floor
servers:
  redis: {kind: redis, external: {port: $PORT, password_env: BENCH_REDIS_PASSWORD}}
workloads:
  w: {redis: {test: $TEST, keyspace: 100000, pipeline: 1}}
concurrency: [1]
length: $REDIS_N
YAML
  rounds "$point" "$REDIS_N" redis redis-benchmark
done
docker rm -f "$NAME" >/dev/null

# --- MariaDB ------------------------------------------------------------------------------
NAME=$MYSQL_NAME
PORT=$(bench_free_port)
bench_start_mariadb "$MARIADB_IMAGE"
# The floor's own user (no password: its handshake does no hashing) and mysqlslap's table.
docker exec "$NAME" mariadb -uroot -e "CREATE DATABASE floor;
  CREATE TABLE floor.t1 (id serial, intcol1 INT(32), charcol1 VARCHAR(128)) ENGINE=InnoDB;
  CREATE USER floor@'127.0.0.1'; GRANT INSERT ON floor.* TO floor@'127.0.0.1'"
mysql_counters() { docker exec "$NAME" mariadb -uroot -N -B -e "SHOW GLOBAL STATUS LIKE 'Com_insert'" >"$1"; }
mysql_check() { # point round tool out
  local b a want
  b=$(awk '{print $2}' "$4.before"); a=$(awk '{print $2}' "$4.after")
  want=$((MYSQL_N + 99)); [ "$3" = floor ] && want=$MYSQL_N
  [ "$3" = mariadb-slap ] && ! grep -q "Average number of seconds" "$4.log" && want=-1
  if [ $((a - b)) -eq "$want" ]; then v=ok; else v=MISMATCH; fi
  bench_check "$1" "$2" "$3" "$v" "Com_insert $((a - b)) (expected $want)"
}
cat >"$WORK/slap.yaml" <<YAML
name: bench-floor
servers:
  bench: {external: {host: 127.0.0.1, port: $PORT, user: root, password_env: BENCH_PW}}
engines: [InnoDB]
workloads:
  w: {slap: {load_type: write, primary_key: autoincrement}}
concurrency: [2]
length: $MYSQL_N
YAML
mysql_cmd() { # tool round
  case $1 in
    rmatrix) CMD=("$RMATRIX" run "$WORK/slap.yaml" --out "$WORK/rm-slap-$2" --quiet) ;;
    mariadb-slap) CMD=("$MARIADB_SLAP" --defaults-extra-file="$WORK/client.cnf" --auto-generate-sql
                       --auto-generate-sql-load-type=write --auto-generate-sql-add-autoincrement
                       --number-of-queries="$MYSQL_N" --concurrency=2) ;;
    floor) CMD=("$WORK/mysql-floor" "$PORT" floor floor "$MYSQL_N" 2) ;;
  esac
}
rounds "mariadb write-autoinc c=2 n=$MYSQL_N" "$MYSQL_N" mysql mariadb-slap

# --- Report -------------------------------------------------------------------------------
python3 - "$WORK/floor.tsv" <<'PY'
import statistics, sys
med = statistics.median
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
points = list(dict.fromkeys(r[0] for r in rows))
print("Every run (client CPU = user+sys of the whole client process tree; server CPU = the server"
      " container's cgroup over that run):\n")
print("| point | round | tool | op/s | client us/op | server us/op |\n|---|---:|---|---:|---:|---:|")
for r in rows:
    print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} |")
print("\nMedians (op/s: operations over the client process's whole wall time, start-up included); ratio = median of the per-round ratios to the peer tool (redis-benchmark,"
      " mariadb-slap):\n")
print("| point | tool | op/s | client us/op | client ratio | server us/op | server ratio |")
print("|---|---|---:|---:|---:|---:|---:|")
for p in points:
    by = {}
    for r in rows:
        if r[0] == p:
            by.setdefault(r[2], {})[r[1]] = tuple(map(float, r[3:6]))
    peer = next(t for t in by if t not in ("rmatrix", "floor"))
    for tool in ("rmatrix", "floor", peer):
        runs = by[tool]
        rounds = [k for k in runs if k in by[peer]]
        cr = med(runs[k][1] / by[peer][k][1] for k in rounds)
        sr = med(runs[k][2] / by[peer][k][2] for k in rounds)
        print(f"| {p} | {tool} | {med(v[0] for v in runs.values()):.0f} | "
              f"{med(v[1] for v in runs.values()):.1f} | {cr:.2f} | "
              f"{med(v[2] for v in runs.values()):.1f} | {sr:.2f} |")
PY
bench_finish
