#!/usr/bin/env bash
# rmatrix's native `slap` workload vs mariadb-slap (MariaDB's mysqlslap), side by side against
# one MariaDB 10.11 container: same auto-generated table and statements, same int/char column
# counts, same query count and concurrency. The server is pinned to SERVER_CPU, both clients
# to CLIENT_CPU (taskset). Rounds alternate which tool goes first (round 1 rmatrix, round 2
# mariadb-slap, ...). Per point and round: each tool's throughput, its client CPU per query
# (user + sys of the whole client process, from the kernel's rusage as GNU time reads it,
# to the microsecond) and the server's CPU per query under its load (the server container's
# cgroup CPU counter read before and after that tool's run); then the median of the
# per-round ratios rmatrix / mariadb-slap.
#
# Load points (LOADS) and how each tool spells them:
#   write-guid     slap {load_type: write, primary_key: guid}
#                  --auto-generate-sql-load-type=write --auto-generate-sql-guid-primary
#   write-autoinc  slap {load_type: write, primary_key: autoincrement}
#                  --auto-generate-sql-load-type=write --auto-generate-sql-add-autoincrement
#   key, read, update, mixed   load_type key|read|update|mixed with primary_key: autoincrement
#                  --auto-generate-sql-load-type=... --auto-generate-sql-add-autoincrement
# Both tools' other defaults are mysqlslap's: 11 distinct statements per client list
# (unique_query_number 10), 99 pre-populated rows, autocommit.
#
# Count check, every run: the server's SHOW GLOBAL STATUS (Com_insert, Com_select,
# Com_update, Questions) before and after the tool's run, read with `docker exec ... mariadb`,
# must equal the tool's own count (mariadb-slap: clients x "Average number of queries per
# client"; rmatrix: `queries` in results.csv, with `errors` 0) plus that tool's fixed
# overhead, as the server's general log shows it (MariaDB 10.11.19, mariadb-slap 10.11.19):
#   both:         99 pre-population INSERTs
#   mariadb-slap: SELECT id FROM t1 (the key list: whenever a primary key is generated);
#                 DROP SCHEMA, CREATE SCHEMA, Init DB, CREATE TABLE, DROP SCHEMA, Quit on its
#                 control connection and one Quit per client (Questions only)
#   rmatrix:      SELECT id FROM t1 (only for key, update and mixed, which need keys);
#                 SELECT VERSION() and, on each of its 2 + clients connections, the driver's
#                 SELECT @@max_allowed_packet,@@wait_timeout (Com_select); SHOW GLOBAL
#                 VARIABLES, SHOW ENGINES, DROP SCHEMA, CREATE SCHEMA, USE, CREATE TABLE,
#                 2 x SHOW GLOBAL STATUS, DROP SCHEMA and 2 + clients Quits (Questions only);
#                 its per-second counter reader's SHOW GLOBAL STATUS (one at the phase's
#                 start, one per second of server_seconds.csv) and that connection's Quit
#   this script:  2 in Questions (its first status connection's Quit, its second SHOW)
# A difference prints MISMATCH with the numbers; the script goes on and exits 1 at the end.
#
# Usage: scripts/bench/bench-vs-mysqlslap.sh [queries per run, default 20000] [rounds, default 3]
# Env:   LOADS (default "write-guid write-autoinc key read update mixed"),
#        CONCURRENCY (default "2 16"; each must divide the query count),
#        INT_COLS / CHAR_COLS (default 1 / 1, mysqlslap's defaults), ENGINE (default InnoDB),
#        SERVER_CPU / CLIENT_CPU (default 0 / 1), SETTLE (seconds of rest before each run,
#        default 1), PORT (default a free one), IMAGE (default the first rmatrix/mariadb-10.11
#        image), MARIADB_SLAP (default mariadb-slap, else mysqlslap),
#        RMATRIX (default: cargo build --release, then target/release/rmatrix),
#        COST (default 1; 0 skips the cost runs), COST_OPS / COST_VG_OPS (queries of the
#        smaller strace / callgrind run, default 4000 / 4000; the other has twice as many).
# Cost per query, after each point's rounds (bench_cost in bench-vs-lib.sh): each tool under
# strace -c -f and under callgrind at two counts; the marginal system calls and user-space
# instructions per query, so the fixed set-up (schema, 99 rows, rmatrix's results) cancels.
# Needs: docker, an rmatrix/mariadb-10.11 image (any matrix with `build: mariadb-10.11` makes
#        it), mariadb-slap (apt-get install mariadb-client), taskset, python3; strace and
#        valgrind unless COST=0.
# The server: host network on 127.0.0.1, labelled rmatrix.run=bench-vs-mysqlslap, removed on
# exit; innodb_flush_log_at_trx_commit=2 so that writes measure CPU, not the disk's fsync.
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 a missing tool, image or bad argument.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

QUERIES=${1:-20000}
ROUNDS=${2:-3}
LOADS=${LOADS:-"write-guid write-autoinc key read update mixed"}
CONCURRENCY=${CONCURRENCY:-"2 16"}
INT_COLS=${INT_COLS:-1}
CHAR_COLS=${CHAR_COLS:-1}
ENGINE=${ENGINE:-InnoDB}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SETTLE=${SETTLE:-1}
COST_OPS=${COST_OPS:-4000}
COST_VG_OPS=${COST_VG_OPS:-4000}
NAME=rmatrix-bench-vs-mysqlslap
LABEL=bench-vs-mysqlslap

for c in $CONCURRENCY; do
  for n in "$QUERIES" "$COST_OPS" "$COST_VG_OPS"; do
    [ $((n % c)) -eq 0 ] || { echo "concurrency $c does not divide $n queries" >&2; exit 2; }
  done
done
for l in $LOADS; do
  case $l in write-guid | write-autoinc | key | read | update | mixed) ;;
    *) echo "unknown load $l (write-guid write-autoinc key read update mixed)" >&2; exit 2 ;;
  esac
done
if [ -z "${MARIADB_SLAP:-}" ]; then
  MARIADB_SLAP=$(command -v mariadb-slap || command -v mysqlslap || true)
fi
[ -n "$MARIADB_SLAP" ] || { echo "missing mariadb-slap: apt-get install mariadb-client" >&2; exit 2; }
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
bench_rmatrix
bench_cost_need
IMAGE=${IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/mariadb-10.11 | head -1)}
[ -n "$IMAGE" ] || { echo "no rmatrix/mariadb-10.11 image: run any matrix with it once (e.g. matrices/quick.yaml)" >&2; exit 2; }
PORT=${PORT:-$(bench_free_port)}

WORK=$(mktemp -d /tmp/bench-vs-mysqlslap.XXXXXX)
: >"$WORK/runs.tsv"
: >"$WORK/checks.tsv"
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
bench_start_mariadb "$IMAGE"
echo "server $IMAGE on CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; $MARIADB_SLAP; $RMATRIX" >&2

status() { # file
  docker exec "$NAME" mariadb -uroot -N -B -e "SHOW GLOBAL STATUS WHERE Variable_name IN
    ('Questions','Com_insert','Com_select','Com_update')" >"$1"
}

pk_of() { case $1 in write-guid) echo guid ;; *) echo autoincrement ;; esac; }
type_of() { case $1 in write-*) echo write ;; *) echo "$1" ;; esac; }

# Runs one tool once; prints "rate count" (count: the tool's own). Around it: server status
# and CPU counter; the status reads (docker exec) stay outside the CPU window.
run_rmatrix() { # load clients out [count, default QUERIES]
  local lt pk
  lt=$(type_of "$1"); pk=$(pk_of "$1")
  cat >"$3.yaml" <<YAML
name: bench-vs-mysqlslap
servers:
  bench: {external: {host: 127.0.0.1, port: $PORT, user: root, password_env: BENCH_PW}}
engines: [$ENGINE]
workloads:
  w: {slap: {load_type: $lt, primary_key: $pk, number_int_cols: $INT_COLS, number_char_cols: $CHAR_COLS}}
concurrency: [$2]
length: ${4:-$QUERIES}
YAML
  "${BENCH_WRAP[@]}" "$RMATRIX" run "$3.yaml" --out "$3" --quiet >"$3.log" 2>&1 || true
  python3 - "$3/results.csv" <<'PY'
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
run_slap() { # load clients out [count, default QUERIES]
  local pkflag
  case $(pk_of "$1") in guid) pkflag=--auto-generate-sql-guid-primary ;;
    *) pkflag=--auto-generate-sql-add-autoincrement ;; esac
  "${BENCH_WRAP[@]}" "$MARIADB_SLAP" --defaults-extra-file="$WORK/client.cnf" --auto-generate-sql \
    --auto-generate-sql-load-type="$(type_of "$1")" "$pkflag" --number-of-queries="${4:-$QUERIES}" \
    --concurrency="$2" --number-int-cols="$INT_COLS" --number-char-cols="$CHAR_COLS" \
    --engine="$ENGINE" >"$3.log" 2>&1 || { echo "0 0 failed:exit-$?"; return; }
  awk -F': ' '/Average number of seconds/ {s = $2 + 0} /Number of clients/ {c = $2}
    /Average number of queries per client/ {q = $2}
    END { if (s > 0) print c * q / s, c * q, "ok"; else print 0, c * q, "failed:no-time" }' "$3.log"
}

# The cost runs (bench_cost): the point's load at COUNT queries under BENCH_WRAP.
cost_rmatrix() { run_rmatrix "$COST_LOAD" "$COST_C" "$2" "$1" | bench_cost_ok "$1"; }
cost_slap() { run_slap "$COST_LOAD" "$COST_C" "$2" "$1" | bench_cost_ok "$1"; }

# The count check of one run: server deltas vs the tool's count plus its fixed overhead.
check() { # point round tool load clients count before after [rmatrix run dir]
  local verdict text
  text=$(python3 - "$3" "$(type_of "$4")" "$5" "$6" "$QUERIES" "$7" "$8" \
    "$(if [ -n "${9:-}" ]; then bench_sampler_questions "$9"; else echo 0; fi)" <<'PY'
import sys
tool, lt, c, count, queries, before, after, sampler = sys.argv[1:9]
c, count, queries, sampler = int(c), int(count), int(queries), int(sampler)
def read(p):
    return {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
b, a = read(before), read(after)
got = {k: a[k] - b[k] for k in a}
L, P = 11, 99                 # statements per client list, pre-populated rows
q = queries // c              # per client: both tools split the count evenly
per = {"ins": 0, "sel": 0, "upd": 0}
for i in range(q):            # each client cycles through its list from the top
    j = i % L
    kind = {"write": "ins", "key": "sel", "read": "sel", "update": "upd",
            "mixed": "ins" if j % 2 == 0 else "sel"}[lt]
    per[kind] += 1
load = {k: v * c for k, v in per.items()}
if tool == "rmatrix":
    keys = 1 if lt in ("key", "update", "mixed") else 0
    sel_over, other = 1 + (2 + c), 11 + c + sampler
else:
    keys, sel_over, other = 1, 0, 6 + c
exp = {"Com_insert": load["ins"] + P, "Com_update": load["upd"],
       "Com_select": load["sel"] + keys + sel_over}
exp["Questions"] = sum(exp.values()) + other + 2
bad = [k for k in exp if exp[k] != got[k]]
if count != queries:
    bad.insert(0, f"tool reported {count} of {queries} queries")
detail = ", ".join(f"{k} {got[k]} (expected {exp[k]})" for k in exp)
print(("MISMATCH " + "; ".join(bad) + ": " if bad else "ok ") +
      f"tool count {count}; server {detail}")
PY
)
  verdict=${text%% *}
  bench_check "$1" "$2" "$3" "$verdict" "${text#* }"
}

run_one() { # tool load clients round point
  local out="$WORK/$1-$2-c$3-r$4" cpu0 cpu1 rate count st
  sleep "$SETTLE"
  status "$out.before"
  cpu0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  BENCH_WRAP=(bench_time "$out.time" taskset -c "$CLIENT_CPU")
  if [ "$1" = rmatrix ]; then
    read -r rate count st < <(run_rmatrix "$2" "$3" "$out")
  else
    read -r rate count st < <(run_slap "$2" "$3" "$out")
  fi
  cpu1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  status "$out.after"
  if [ "$st" != ok ]; then
    echo "$1 run failed ($st): $out.log" >&2
    tail -5 "$out.log" >&2
    exit 1
  fi
  check "$5" "$4" "$1" "$2" "$3" "$count" "$out.before" "$out.after" \
    "$([ "$1" = rmatrix ] && echo "$out")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$5" "$4" "$FIRST" "$1" "$rate" "$count" \
    "$(awk '{print $2 + $3}' "$out.time")" "$((cpu1 - cpu0))" >>"$WORK/runs.tsv"
}

for load in $LOADS; do
  for c in $CONCURRENCY; do
    point="$load c=$c"
    for round in $(seq "$ROUNDS"); do
      if [ $((round % 2)) -eq 1 ]; then order="rmatrix mariadb-slap"; else order="mariadb-slap rmatrix"; fi
      FIRST=${order%% *}
      for tool in $order; do run_one "$tool" "$load" "$c" "$round" "$point"; done
      echo "done: $point round $round" >&2
    done
    COST_LOAD=$load COST_C=$c
    bench_cost "$point" rmatrix cost_rmatrix
    bench_cost "$point" mariadb-slap cost_slap
  done
done

echo "rmatrix slap vs $("$MARIADB_SLAP" --version | awk '{print $1, $2, $3, $5}' | tr -d ,), $QUERIES queries per run, $INT_COLS int + $CHAR_COLS char columns, $ENGINE, server $IMAGE"
echo
bench_report mariadb-slap query
bench_cost_report mariadb-slap query
bench_finish
