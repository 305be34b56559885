#!/usr/bin/env bash
# rmatrix's native oltp driver vs sysbench 1.0, side by side, against the same MariaDB
# container and the same sbtest tables. The server is pinned to SERVER_CPU and both clients
# to CLIENT_CPU. For each test and thread count the two clients run alternately, odd rounds
# rmatrix first, even rounds sysbench first. Per point and round: transactions/s of each,
# client CPU per transaction (user + sys of the whole client process, from the kernel's
# rusage as GNU time reads it, so rmatrix's start-up and result writing are included), the
# server's CPU per transaction under that tool's load (the server container's cgroup CPU
# counter read before and after the run) and max RSS; then per point the median of each
# tool's values and the MEDIAN OF THE PER-ROUND RATIOS rmatrix / sysbench. Finally rmatrix
# runs oltp_point_select at 512 connections for its memory.
#
# Count check, every run: SHOW GLOBAL STATUS before and after the run (docker exec ...
# mariadb, outside the CPU window). Statements that failed are sent and counted by the
# server, so the load is the tool's queries + its errors:
#   sysbench: Questions = queries + ignored errors + one Quit per thread; Com_select =
#             reads; Com_commit = transactions (tests with BEGIN/COMMIT) else 0.
#   rmatrix:  Questions = queries + errors + 14 + 2 x threads, Com_select = reads + 6 +
#             threads, Com_commit = commits (tests with BEGIN/COMMIT) else 0, from its
#             results.csv row; the fixed part, from the server's general log: each of its
#             3 + threads connections runs the driver's SELECT @@max_allowed_packet[,...]
#             and a Quit; SELECT VERSION(), SHOW GLOBAL VARIABLES, CREATE DATABASE IF NOT
#             EXISTS, USE, SELECT signature FROM rmatrix_oltp_prepared (tables already
#             there), 2 x SHOW GLOBAL STATUS, SELECT COUNT(*) FROM processlist (repeated
#             every 10 ms while its clients' connections are still closing: each repeat is
#             one more in Questions and Com_select; up to 100 are accepted and printed);
#             its per-second counter reader's SHOW GLOBAL STATUS (one at the phase's start,
#             one per second of server_seconds.csv) and that connection's Quit (Questions).
#   this script: 2 in Questions (its first status connection's Quit, its second SHOW).
# A difference prints MISMATCH with the numbers; the script goes on and exits 1 at the end.
#
# Errors and deadlocks, every run: the tool's ignored errors and the server's Innodb_deadlocks
# counter (read with the status above), printed per point as median [min, max] over the
# rounds, so that the write tests' lock conflicts under both tools' key distribution (both
# default to sysbench 1.0's `special`) can be set side by side. Also per point, median over
# the rounds: what reached the server per transaction (Com_begin/commit/rollback/select/
# insert/update/delete/stmt_execute/stmt_prepare) and the row lock waits and their time
# (Innodb_row_lock_waits, Innodb_row_lock_time), from the same status reads.
#
# Usage: scripts/bench/bench-vs-sysbench.sh [seconds per run, default 10] [rounds, default 3]
# Env:   TESTS (default "oltp_point_select oltp_read_write"), THREADS (default "1 4 16 64"),
#        TABLES / TABLE_SIZE (default 4 / 100000), SERVER_CPU / CLIENT_CPU (default 0 / 1),
#        MEM_CONNECTIONS (the memory run's connections, default 512; 0 skips it),
#        PORT (default a free one), IMAGE (default the first rmatrix/mariadb-10.11 image),
#        RMATRIX (default: cargo build --release, then target/release/rmatrix),
#        COST (default 1; 0 skips the cost runs), COST_OPS / COST_VG_OPS (transactions of the
#        smaller strace / callgrind run, default 2000 / 200; the other has twice as many).
# Cost per transaction, after each point's rounds (bench_cost in bench-vs-lib.sh): each tool
# under strace -c -f and under callgrind at two event counts (rmatrix `length: N`, sysbench
# --events=N --time=0); the marginal system calls and user-space instructions per
# transaction, so start-up and results cancel.
# Needs: docker, an rmatrix/mariadb-10.11 image (any matrix with `build: mariadb-10.11` makes
#        it), sysbench 1.0 (apt-get install sysbench), taskset, python3; strace and valgrind
#        unless COST=0.
# The server: host network on 127.0.0.1, labelled rmatrix.run=bench-vs-sysbench, removed on
# exit; buffer pool 512M, innodb_flush_log_at_trx_commit=2.
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 a missing tool or image.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

SECS=${1:-10}
ROUNDS=${2:-3}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
THREADS=${THREADS:-"1 4 16 64"}
TESTS=${TESTS:-"oltp_point_select oltp_read_write"}
MEM_CONNECTIONS=${MEM_CONNECTIONS:-512}
COST_OPS=${COST_OPS:-2000}
COST_VG_OPS=${COST_VG_OPS:-200}
NAME=rmatrix-bench-vs-sysbench
LABEL=bench-vs-sysbench

bench_need sysbench "apt-get install sysbench"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
bench_rmatrix
bench_cost_need
IMAGE=${IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/mariadb-10.11 | head -1)}
[ -n "$IMAGE" ] || { echo "no rmatrix/mariadb-10.11 image: run any matrix with it once (e.g. matrices/quick.yaml)" >&2; exit 2; }
PORT=${PORT:-$(bench_free_port)}

BENCH_PW=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
export BENCH_PW
WORK=$(mktemp -d /tmp/bench-vs-sysbench.XXXXXX)
: >"$WORK/runs.tsv"
: >"$WORK/checks.tsv"
: >"$WORK/rss.tsv"
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
# sysbench reads the password from a 0600 config file, rmatrix from BENCH_PW.
(umask 077; printf 'mysql-password=%s\n' "$BENCH_PW" >"$WORK/sysbench.cnf")

docker rm -f "$NAME" >/dev/null 2>&1 || true
docker run -d --name "$NAME" --label "rmatrix.run=$LABEL" --network host \
  --cpuset-cpus="$SERVER_CPU" -e MARIADB_ROOT_PASSWORD="$BENCH_PW" "$IMAGE" \
  --port="$PORT" --bind-address=127.0.0.1 --max-connections=1000 \
  --max-prepared-stmt-count=100000 --innodb-buffer-pool-size=512M \
  --innodb-flush-log-at-trx-commit=2 >/dev/null
for _ in $(seq 120); do
  docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 1
done
docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null
read -r CPU_KIND CPU_FILE < <(bench_cpu_file "$NAME")
echo "server $IMAGE on CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; $RMATRIX" >&2

SB=(sysbench --config-file="$WORK/sysbench.cnf" --db-driver=mysql --mysql-host=127.0.0.1
    --mysql-port="$PORT" --mysql-user=root --mysql-db=sbtest --tables="$TABLES"
    --table_size="$TABLE_SIZE")

matrix() { # test threads length
  cat >"$WORK/m.yaml" <<YAML
name: bench
servers:
  bench: {external: {host: 127.0.0.1, port: $PORT, user: root, password_env: BENCH_PW}}
workloads:
  w: {oltp: {test: $1, tables: $TABLES, table_size: $TABLE_SIZE}}
concurrency: [$2]
length: $3
YAML
}

# rmatrix loads the tables (parallel prepare); sysbench then uses the same ones.
matrix oltp_point_select 1 1
start=$(date +%s.%N)
"$RMATRIX" run "$WORK/m.yaml" --out "$WORK/prepare" --quiet >/dev/null 2>&1
echo "prepare (rmatrix, ${TABLES}x${TABLE_SIZE} rows): $(echo "$(date +%s.%N) - $start" | bc) s" >&2

status() { # file
  docker exec "$NAME" mariadb -uroot -N -B -e "SHOW GLOBAL STATUS WHERE Variable_name IN
    ($(printf "'%s'," Questions Com_select Com_commit Innodb_deadlocks "${SENT[@]}")'Questions')" >"$1"
}
# What each tool sent and what it waited for, per transaction (the server's counters).
SENT=(Com_begin Com_rollback Com_insert Com_update Com_delete Com_stmt_execute
  Com_stmt_prepare Innodb_row_lock_waits Innodb_row_lock_time)

# Each prints "tps transactions queries errors reads status" (the tool's own counts).
run_rmatrix() { # test threads out [length, default SECS seconds]
  matrix "$1" "$2" "${4:-${SECS}s}"
  "${BENCH_WRAP[@]}" "$RMATRIX" run "$WORK/m.yaml" --out "$3" --quiet >/dev/null 2>"$3.err" || true
  python3 - "$3/results.csv" <<'PY'
import csv, sys
try:
    r = next(csv.DictReader(open(sys.argv[1])))
except (OSError, StopIteration):
    print("0 0 0 0 0 no-results")
    sys.exit()
n = lambda k: r[k] or "0"
print(n("tps"), n("commits"), n("queries"), n("errors"), n("reads"), r["status"])
PY
}
run_sysbench() { # test threads out [events, default none: SECS seconds]
  local len=(--time="$SECS")
  [ -z "${4:-}" ] || len=(--time=0 --events="$4")
  "${BENCH_WRAP[@]}" "${SB[@]}" --threads="$2" "${len[@]}" "$1" run >"$3.out" 2>&1 || true
  awk '/transactions:/ {gsub(/[()]/, "", $3); tps = $3; tx = $2}
       /^ *queries:/ {q = $2} /ignored errors:/ {e = $3} /^ *read:/ {r = $2}
       END { if (tx > 0) print tps, tx, q, e, r, "ok"; else print "0 0 0 0 0 failed" }' "$3.out"
}

# The cost runs (bench_cost): the point at COUNT transactions under BENCH_WRAP; prints "ok".
cost_rmatrix() { run_rmatrix "$COST_TEST" "$COST_T" "$2" "$1" | awk '{print $1, $2, $6}' | bench_cost_ok "$1"; }
cost_sysbench() { run_sysbench "$COST_TEST" "$COST_T" "$2" "$1" | awk '{print $1, $2, $6}' | bench_cost_ok "$1"; }

check() { # point round tool test threads transactions queries errors reads before after sampler
  local text
  text=$(python3 - "$@" <<'PY'
import sys
point, rnd, tool, test, c, tx, q, err, reads, before, after, sampler = sys.argv[1:13]
c, tx, q, err, reads, sampler = int(c), int(tx), int(q), int(err), int(reads), int(sampler)
def read(p):
    return {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
b, a = read(before), read(after)
got = {k: a[k] - b[k] for k in a}
trx = test in ("oltp_read_write", "oltp_read_only", "oltp_write_only")
if tool == "rmatrix":
    exp = {"Questions": q + err + 14 + 2 * c + sampler, "Com_select": reads + 6 + c}
else:
    exp = {"Questions": q + err + c, "Com_select": reads}
exp["Questions"] += 2
exp["Com_commit"] = tx if trx else 0
polls = 0
if tool == "rmatrix":
    # rmatrix repeats its processlist poll (one SELECT) every 10 ms until its clients are
    # gone: equal extras in Questions and Com_select, a few at most.
    extra = got["Questions"] - exp["Questions"]
    if extra == got["Com_select"] - exp["Com_select"] and 0 < extra <= 100:
        polls = extra
        exp["Questions"] += polls
        exp["Com_select"] += polls
bad = [k for k in exp if exp[k] != got[k]]
detail = ", ".join(f"{k} {got[k]} (expected {exp[k]})" for k in exp)
if polls:
    detail += f" (with {polls} repeated processlist poll(s))"
print(("MISMATCH " + "; ".join(bad) + ": " if bad else "ok ") +
      f"tool: {q} queries, {err} errors, {reads} reads, {tx} transactions; server {detail}")
PY
)
  bench_check "$1" "$2" "$3" "${text%% *}" "${text#* }"
}

run_one() { # tool test threads round point
  local out="$WORK/$1-$2-$3-$4" cpu0 cpu1 tps tx q err reads st
  status "$out.before"
  cpu0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  BENCH_WRAP=(bench_time "$out.time" taskset -c "$CLIENT_CPU")
  if [ "$1" = rmatrix ]; then
    read -r tps tx q err reads st < <(run_rmatrix "$2" "$3" "$out")
  else
    read -r tps tx q err reads st < <(run_sysbench "$2" "$3" "$out")
  fi
  cpu1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  status "$out.after"
  [ "$st" = ok ] || { echo "$1 run failed: $out.*" >&2; exit 1; }
  check "$5" "$4" "$1" "$2" "$3" "$tx" "$q" "$err" "$reads" "$out.before" "$out.after" \
    "$(if [ "$1" = rmatrix ]; then bench_sampler_questions "$out"; else echo 0; fi)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$5" "$4" "$FIRST" "$1" "$tps" "$tx" \
    "$(awk '{print $2 + $3}' "$out.time")" "$((cpu1 - cpu0))" >>"$WORK/runs.tsv"
  printf '%s\t%s\t%s\n' "$5" "$1" "$(awk '{printf "%.0f", $4 / 1024}' "$out.time")" >>"$WORK/rss.tsv"
  printf '%s\t%s\t%s\t%s\n' "$5" "$1" "$err" "$(deadlocks "$out.before" "$out.after")" >>"$WORK/errors.tsv"
  printf '%s\t%s\t%s\t%s\t%s\n' "$5" "$1" "$tx" "$out.before" "$out.after" >>"$WORK/sent.tsv"
}

deadlocks() { # before after: the server's Innodb_deadlocks during the run
  awk '$1 == "Innodb_deadlocks" {v[FILENAME] = $2} END {print v[ARGV[2]] - v[ARGV[1]]}' "$1" "$2"
}

for test in $TESTS; do
  for t in $THREADS; do
    point="$test x$t"
    for round in $(seq "$ROUNDS"); do
      if [ $((round % 2)) -eq 1 ]; then order="rmatrix sysbench"; else order="sysbench rmatrix"; fi
      FIRST=${order%% *}
      for tool in $order; do run_one "$tool" "$test" "$t" "$round" "$point"; done
      echo "done: $point round $round" >&2
    done
    COST_TEST=$test COST_T=$t
    bench_cost "$point" rmatrix cost_rmatrix
    bench_cost "$point" sysbench cost_sysbench
  done
done

echo "rmatrix oltp vs $(sysbench --version), ${SECS} s per run, ${TABLES}x${TABLE_SIZE} rows, server $IMAGE"
echo
bench_report sysbench transaction
bench_cost_report sysbench transaction
echo
echo "Ignored errors (the tool's count) and deadlocks (the server's Innodb_deadlocks) per run,"
echo "median [min, max] over the rounds:"
echo
echo "| point | rmatrix errors | sysbench errors | rmatrix deadlocks | sysbench deadlocks |"
echo "|---|---:|---:|---:|---:|"
python3 - "$WORK/errors.tsv" <<'PY'
import sys
from statistics import median
runs = {}
for line in open(sys.argv[1]):
    point, tool, err, dl = line.rstrip("\n").split("\t")
    runs.setdefault(point, {}).setdefault(tool, []).append((int(err), int(dl)))
def cell(values):
    return f"{median(values):g} [{min(values)}, {max(values)}]" if values else "-"
for point, tools in runs.items():
    r, s = tools.get("rmatrix", []), tools.get("sysbench", [])
    print(f"| {point} | {cell([e for e, _ in r])} | {cell([e for e, _ in s])} | "
          f"{cell([d for _, d in r])} | {cell([d for _, d in s])} |")
PY
echo
echo "What reached the server per transaction (SHOW GLOBAL STATUS deltas over each run / the"
echo "tool's transactions; Innodb_row_lock_time in ms), median over the rounds, rmatrix / sysbench:"
echo
python3 - "$WORK/sent.tsv" "${SENT[@]}" Com_select Com_commit <<'PY'
import sys
from statistics import median
path, names = sys.argv[1], sys.argv[2:]
def read(p):
    return {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
per = {}
for line in open(path):
    point, tool, tx, before, after = line.rstrip("\n").split("\t")
    b, a = read(before), read(after)
    per.setdefault(point, {}).setdefault(tool, []).append(
        {k: (a[k] - b[k]) / max(int(tx), 1) for k in names})
print("| point | " + " | ".join(names) + " |")
print("|---|" + "---:|" * len(names))
for point, tools in per.items():
    cells = []
    for k in names:
        r = median(x[k] for x in tools.get("rmatrix", [{k: 0}]))
        s = median(x[k] for x in tools.get("sysbench", [{k: 0}]))
        cells.append(f"{r:.3g} / {s:.3g}")
    print(f"| {point} | " + " | ".join(cells) + " |")
PY
echo
echo "Max RSS of the client process, MB (largest over the rounds):"
echo
echo "| point | rmatrix | sysbench |"
echo "|---|---:|---:|"
awk -F'\t' '{k = $1; if (!(k in seen)) {seen[k] = 1; order[++n] = k}
  if ($3 > m[k, $2]) m[k, $2] = $3}
  END {for (i = 1; i <= n; i++) printf "| %s | %d | %d |\n", order[i], m[order[i], "rmatrix"], m[order[i], "sysbench"]}' "$WORK/rss.tsv"

if [ "$MEM_CONNECTIONS" -gt 0 ]; then
  r="$WORK/r-mem-$MEM_CONNECTIONS"
  BENCH_WRAP=(bench_time "$r.time" taskset -c "$CLIENT_CPU")
  read -r tps _ _ _ _ st < <(run_rmatrix oltp_point_select "$MEM_CONNECTIONS" "$r")
  echo
  echo "rmatrix at $MEM_CONNECTIONS connections (oltp_point_select): max RSS $(awk '{printf "%.0f", $4 / 1024}' "$r.time") MB, $(printf '%.0f' "$tps") tps ($st)"
fi
bench_finish
