#!/usr/bin/env bash
# rmatrix's `tpcc` against Percona-Lab/sysbench-tpcc (run by Debian's sysbench 1.0), side by
# side on one server container pinned to SERVER_CPU with both clients on CLIENT_CPU, on
# MariaDB 10.11 and PostgreSQL 15 (FAMILIES). Each tool loads its own tables into its own
# database of the same server (WAREHOUSES each: rmatrix `tpcc`, sysbench-tpcc `sbtpcc`),
# once, before the rounds; both databases grow over the rounds alike. Per point (family x
# threads) the two run alternately, odd rounds rmatrix first, even rounds sysbench-tpcc, and
# bench_report (bench-vs-lib.sh) prints every round and the MEDIAN OF THE PER-ROUND RATIOS
# rmatrix / sysbench-tpcc of transactions/s, client CPU per transaction (rusage of the whole
# client process) and server CPU per transaction (the container's cgroup), against this
# comparison's targets: throughput >= 0.95, client CPU per transaction <= 1.0.
#
# sysbench-tpcc's source: SYSBENCH_TPCC_GIT (a git directory or clone of
# https://github.com/Percona-Lab/sysbench-tpcc), of which exactly commit PIN is read: its four
# Lua files as raw blobs (`git cat-file blob`, so no filter or attribute of the repository
# runs) into target/sysbench-tpcc/PIN; git runs with the repository's program-naming
# settings overridden (hooks, fsmonitor, pager, ...), as src/servers/images/git.rs does.
# Nothing of the repository runs but its Lua files, through sysbench.
#
# How the two are made alike:
#   - mix: sysbench-tpcc deals uniform(1,23) per event, 10/10/1/1/1 (43.5/43.5/4.3 x 3%);
#     rmatrix gets weights 44/44/4/4/4, the closest integer percentages (it deals a shuffled
#     deck; sysbench draws with replacement);
#   - foreign keys: rmatrix has none, so sysbench-tpcc loads with --use_fk=0 (its MySQL
#     sessions turn FOREIGN_KEY_CHECKS off anyway);
#   - isolation: rmatrix uses the server's default, REPEATABLE READ on MariaDB and READ
#     COMMITTED on PostgreSQL; sysbench-tpcc gets --trx_level=RR / RC to match;
#   - the same threads (one connection each), no think time in either, --tables=1;
#   - PostgreSQL: autovacuum off, both databases ANALYZEd once after loading.
# Known differences that stay (docs/workloads.md, /work/shared reference tpcc.md):
# sysbench-tpcc picks a random warehouse per transaction (rmatrix: terminal i's home is
# warehouse i % W + 1, so 1 thread uses one warehouse), its "remote" supply warehouse is
# always the home one (its other_ware loop, issue #49), NURand's C is redrawn per call, it
# updates only s_quantity, its Payment amounts are integers, it sends statements as text
# (rmatrix prepares them), a restarted event redraws its type, and its 1% New-Order
# rollbacks count as transactions in its tps (rmatrix's tps counts them too).
#
# Per run, beside the ratios: New-Orders/s (the growth of sum(d_next_o_id) of that tool's
# database: committed New-Orders as the tables record them, / the run's seconds);
# statements per transaction as the server counted them (MariaDB: Com_select/insert/update/
# delete/begin/commit/rollback deltas; PostgreSQL: pg_stat_database's xact_commit/rollback
# and rows inserted/updated/deleted of that database); and the ids of the order lines the
# run inserted (orders from each district's d_next_o_id before the run): lines per order,
# share of lines on the run's hottest 1% of items, the item skew (the chance that two lines
# name one item, x 100,000: 1 is uniform, whatever the run's length), share with a remote
# supply warehouse.
#
# Count checks, every run (the server's counters read after the run's sessions are gone):
#   sysbench-tpcc: transactions = commits + rollbacks - deadlocks (its 1% New-Order rollbacks
#     count as transactions; a deadlock rolls back, its hook sends ROLLBACK and the event
#     restarts), from Com_commit/Com_rollback/Innodb_deadlocks on MariaDB, from the database's
#     xact_commit - 3 x threads (each session's start and its two SETs)/xact_rollback/
#     deadlocks on PostgreSQL; on MariaDB also ignored errors = Com_rollback, writes =
#     Com_insert + update + delete, reads = Com_select + threads - 1 (it counts the SHOW
#     VARIABLES of its sessions' set-up as reads, all but one, at 1, 4 and 16 threads);
#   rmatrix: results.csv commits = Com_commit (MariaDB) / xact_commit - 25 - 36 x threads
#     (PostgreSQL: its sessions' starts and the statements each prepares outside a
#     transaction, the marker's and the consistency check's), the transactions it ended
#     (operations.csv loops) - commits + retries (errors) = Com_rollback / xact_rollback; on
#     MariaDB writes = Com_insert + update + delete and reads = Com_select - 16 - threads
#     (each connection's driver set-up, the marker, the consistency check).
# A difference prints MISMATCH; the script goes on and exits 1 at the end.
#
# Usage: scripts/bench/bench-vs-sysbench-tpcc.sh [seconds per run, default 10] [rounds, default 3]
# Env:   FAMILIES (default "mariadb postgres"), THREADS (default "1 4 16"), WAREHOUSES
#        (default 2), SERVER_CPU / CLIENT_CPU (default 0 / 1), SYSBENCH_TPCC_GIT (default
#        /work/.mirror/Percona-Lab+sysbench-tpcc/repo), MARIADB_IMAGE / POSTGRES_IMAGE
#        (default the first rmatrix/mariadb-10.11 / rmatrix/postgres-15 image), RMATRIX
#        (default: cargo build --release, then target/release/rmatrix).
# Needs: docker, the two images (any matrix with `build: mariadb-10.11` / `postgres-15`),
#        sysbench 1.0 (apt-get install sysbench), git, psql, taskset, python3.
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 a missing tool, image or source.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

SECS=${1:-10}
ROUNDS=${2:-3}
FAMILIES=${FAMILIES:-"mariadb postgres"}
THREADS=${THREADS:-"1 4 16"}
WAREHOUSES=${WAREHOUSES:-2}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SYSBENCH_TPCC_GIT=${SYSBENCH_TPCC_GIT:-/work/.mirror/Percona-Lab+sysbench-tpcc/repo}
PIN=585e2b8af327d35866aed7e56837c2134d8835a9
NAME=rmatrix-bench-vs-sysbench-tpcc
LABEL=bench-vs-sysbench-tpcc
export BENCH_TARGETS="0.95 1.0 1.02"

bench_need sysbench "apt-get install sysbench"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need git "apt-get install git"
bench_need psql "apt-get install postgresql-client"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
bench_rmatrix

# The pinned Lua files, read as blobs of the verified commit.
safe_git() {
  git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.pager=cat \
    -c core.sshCommand=false -c core.askPass=false -c protocol.allow=never \
    -c diff.external= -c log.showSignature=false "$@"
}
LUA_DIR=${CARGO_TARGET_DIR:-target}/sysbench-tpcc/$PIN
[ ! -d "$SYSBENCH_TPCC_GIT/.git" ] || SYSBENCH_TPCC_GIT=$SYSBENCH_TPCC_GIT/.git  # a clone's work tree
if [ ! -s "$LUA_DIR/tpcc_check.lua" ]; then
  got=$(GIT_DIR=$SYSBENCH_TPCC_GIT safe_git rev-parse --verify --quiet "$PIN^{commit}" || true)
  [ "$got" = "$PIN" ] || { echo "SYSBENCH_TPCC_GIT=$SYSBENCH_TPCC_GIT has no commit $PIN" >&2; exit 2; }
  mkdir -p "$LUA_DIR.tmp"
  for f in tpcc.lua tpcc_common.lua tpcc_run.lua tpcc_check.lua; do
    GIT_DIR=$SYSBENCH_TPCC_GIT safe_git cat-file blob "$PIN:$f" >"$LUA_DIR.tmp/$f"
  done
  rm -rf "$LUA_DIR" && mv "$LUA_DIR.tmp" "$LUA_DIR"
fi
LUA_DIR=$(cd "$LUA_DIR" && pwd)

WORK=$(mktemp -d /tmp/bench-vs-sysbench-tpcc.XXXXXX)
: >"$WORK/runs.tsv"
: >"$WORK/checks.tsv"
: >"$WORK/extra.tsv"
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
PORT=$(bench_free_port)

# --- per family: start, sql, counters, sysbench options, rmatrix's server block ---------

start_mariadb() {
  local image=${MARIADB_IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/mariadb-10.11 | head -1)}
  [ -n "$image" ] || { echo "no rmatrix/mariadb-10.11 image" >&2; exit 2; }
  bench_start_mariadb "$image" --innodb-buffer-pool-size=1G
  (umask 077; printf 'mysql-password=%s\n' "$BENCH_PW" >"$WORK/sysbench.cnf")
  SB_CONN=(--config-file="$WORK/sysbench.cnf" --db-driver=mysql --mysql-host=127.0.0.1
           --mysql-port="$PORT" --mysql-user=root --mysql-db=sbtpcc --trx_level=RR)
  SERVER_BLOCK="{external: {host: 127.0.0.1, port: $PORT, user: root, password_env: BENCH_PW}}"
  IMAGE=$image
}
start_postgres() {
  local image=${POSTGRES_IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/postgres-15 | head -1)}
  [ -n "$image" ] || { echo "no rmatrix/postgres-15 image" >&2; exit 2; }
  BENCH_PW=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  export BENCH_PW
  (umask 077; printf '127.0.0.1:%s:*:postgres:%s\n' "$PORT" "$BENCH_PW" >"$WORK/pgpass")
  export PGPASSFILE="$WORK/pgpass"
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  docker run -d --name "$NAME" --label "rmatrix.run=$LABEL" --network host \
    --cpuset-cpus="$SERVER_CPU" -e POSTGRES_PASSWORD="$BENCH_PW" "$image" \
    -c listen_addresses=127.0.0.1 -c port="$PORT" -c shared_buffers=1GB \
    -c max_connections=200 -c autovacuum=off >/dev/null
  for _ in $(seq 60); do sql postgres 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
  sql postgres 'SELECT 1' >/dev/null
  read -r CPU_KIND CPU_FILE < <(bench_cpu_file "$NAME")
  SB_CONN=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT" --pgsql-user=postgres
           --pgsql-db=sbtpcc --trx_level=RC)
  SERVER_BLOCK="{kind: postgres, external: {host: 127.0.0.1, port: $PORT, user: postgres, password_env: BENCH_PW}}"
  IMAGE=$image
}

sql() { # database query: tab-separated rows
  if [ "$FAMILY" = mariadb ]; then
    docker exec "$NAME" mariadb -uroot -N -B "$1" -e "$2"
  else
    psql -X -q -At -F "$(printf '\t')" -h 127.0.0.1 -p "$PORT" -U postgres -d "$1" -c "$2"
  fi
}

# The server's counters for database $1 as "name value" lines, once no client session of
# the two benchmark databases is left and (PostgreSQL) two reads 100 ms apart agree.
counters() { # database file
  if [ "$FAMILY" = mariadb ]; then
    for _ in $(seq 500); do
      [ "$(sql mysql "SELECT COUNT(*) FROM information_schema.processlist WHERE db IN ('tpcc','sbtpcc')")" = 0 ] && break
      sleep 0.02
    done
    sql mysql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select','Com_insert','Com_update',
      'Com_delete','Com_begin','Com_commit','Com_rollback','Innodb_deadlocks')" >"$2"
    return
  fi
  local q last="" now=""
  q="SELECT k, v FROM pg_stat_database, LATERAL (VALUES ('xact_commit', xact_commit),
    ('xact_rollback', xact_rollback), ('deadlocks', deadlocks), ('tup_inserted', tup_inserted),
    ('tup_updated', tup_updated), ('tup_deleted', tup_deleted)) AS c(k, v) WHERE datname = '$1'"
  for _ in $(seq 500); do
    [ "$(sql postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname IN ('tpcc','sbtpcc')")" = 0 ] && break
    sleep 0.02
  done
  for _ in $(seq 100); do
    now=$(sql postgres "$q")
    [ "$now" = "$last" ] && break
    last=$now
    sleep 0.1
  done
  tr '\t' ' ' <<<"$now" >"$2"
}

# --- the tools ---------------------------------------------------------------------------

matrix() { # threads length
  cat >"$WORK/m.yaml" <<YAML
name: bench
servers:
  bench: $SERVER_BLOCK
workloads:
  w: {tpcc: {warehouses: $WAREHOUSES, db: tpcc, weights: {new_order: 44, payment: 44, order_status: 4, delivery: 4, stock_level: 4}}}
concurrency: [$1]
length: $2
YAML
}
# sysbench-tpcc's command line in SB_CMD (run in its directory: its Lua files require each
# other).
sysbench_tpcc() { # threads command [options...]
  SB_CMD=(env -C "$LUA_DIR" sysbench ./tpcc.lua "${SB_CONN[@]}" --scale="$WAREHOUSES" --tables=1
          --use_fk=0 --threads="$1" "${@:3}" "$2")
}

# Each prints "tps transactions errors ended reads writes status".
run_rmatrix() { # threads out
  matrix "$1" "${SECS}s"
  "${BENCH_WRAP[@]}" "$RMATRIX" run "$WORK/m.yaml" --out "$2" --quiet >/dev/null 2>"$2.err" || true
  python3 - "$2" <<'PY'
import csv, sys
try:
    r = next(csv.DictReader(open(sys.argv[1] + "/results.csv")))
    ended = sum(int(float(o["loops"])) for o in csv.DictReader(open(sys.argv[1] + "/operations.csv")))
except (OSError, StopIteration, KeyError, ValueError):
    print("0 0 0 0 0 0 no-results")
    sys.exit()
print(r["tps"] or 0, r["commits"] or 0, r["errors"] or 0, ended, r["reads"] or 0, r["writes"] or 0,
      r["status"])
PY
}
run_sysbench() { # threads out
  sysbench_tpcc "$1" run --time="$SECS"
  "${BENCH_WRAP[@]}" "${SB_CMD[@]}" >"$2.out" 2>&1 || true
  awk '/transactions:/ {gsub(/[()]/, "", $3); tps = $3; tx = $2} /ignored errors:/ {e = $3}
       /^ *read:/ {r = $2} /^ *write:/ {w = $2}
       END { if (tx > 0) print tps, tx, e + 0, tx, r, w, "ok"; else print "0 0 0 0 0 0 failed" }' "$2.out"
}

# --- the tables' view: New-Orders and the order lines a run inserted ----------------------

tables_of() { # tool: "database district order_line"
  if [ "$1" = rmatrix ]; then echo "tpcc district order_line"; else echo "sbtpcc district1 order_line1"; fi
}
next_ids() { # tool file: "w d d_next_o_id" per district
  local db dist ol
  read -r db dist ol < <(tables_of "$1")
  sql "$db" "SELECT d_w_id, d_id, d_next_o_id FROM $dist ORDER BY d_w_id, d_id" >"$2"
}
# "new_orders lines lines_per_order hot1 skew remote" of the run between two next_ids files:
# skew = the chance that two of its lines name the same item, x 100,000 (1 = uniform, NURand
# (8191) with one C about 18; a C redrawn per call is uniform), whatever the run's length.
inserted() { # tool before after
  local db dist ol where
  read -r db dist ol < <(tables_of "$1")
  where=$(awk '{printf "%s(ol_w_id = %d AND ol_d_id = %d AND ol_o_id >= %d)", (NR > 1 ? " OR " : ""), $1, $2, $3}' "$2")
  sql "$db" "SELECT ol_i_id, COUNT(*), SUM(CASE WHEN ol_supply_w_id <> ol_w_id THEN 1 ELSE 0 END)
             FROM $ol WHERE $where GROUP BY ol_i_id" >"$WORK/lines.tsv"
  python3 - "$2" "$3" "$WORK/lines.tsv" <<'PY'
import sys
ids = lambda p: sum(int(l.split()[2]) for l in open(p) if l.strip())
orders = ids(sys.argv[2]) - ids(sys.argv[1])
counts, remote = [], 0
for l in open(sys.argv[3]):
    if l.strip():
        _, n, r = l.split()
        counts.append(int(n))
        remote += int(r)
counts.sort(reverse=True)
lines = sum(counts) or 1
skew = sum(n * (n - 1) for n in counts) / max(lines * (lines - 1), 1) * 100000
print(orders, sum(counts), f"{sum(counts) / max(orders, 1):.2f}", f"{sum(counts[:1000]) / lines:.4f}",
      f"{skew:.2f}", f"{remote / lines:.4f}")
PY
}

# --- count checks ------------------------------------------------------------------------

# What rmatrix sends besides the measured transactions, per family and threads, as
# "commit rollback select write" (from runs with the server's counters read around them).
rmatrix_fixed() { # threads
  if [ "$FAMILY" = mariadb ]; then echo "0 0 $((16 + $1)) 0"; else echo "$((25 + 36 * $1)) 0 0 0"; fi
}
check() { # point round tool threads tx errors ended reads writes before after
  local text
  text=$(python3 - "$@" "$FAMILY" "$(rmatrix_fixed "$4")" <<'PY'
import sys
point, rnd, tool, c, tx, err, ended, reads, writes, before, after, family, fixed = sys.argv[1:14]
c, tx, err, ended, reads, writes = int(c), int(tx), int(err), int(ended), int(reads), int(writes)
fc, fr, fs, fw = (int(x) for x in fixed.split())
read = lambda p: {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
b, a = read(before), read(after)
d = {k: a[k] - b[k] for k in a}
if family == "mariadb":
    com, rb, dl = d["Com_commit"], d["Com_rollback"], d["Innodb_deadlocks"]
else:
    com, rb, dl = d["xact_commit"], d["xact_rollback"], d["deadlocks"]
if tool == "sysbench":
    session = 0 if family == "mariadb" else 3 * c
    exp = {"transactions": (com - session + rb - dl, tx)}
    if family == "mariadb":
        exp["ignored errors"] = (rb, err)
else:
    exp = {"commits": (com - fc, tx), "rollbacks": (rb - fr, ended - tx + err)}
if family == "mariadb":
    fs, fw = (fs, fw) if tool == "rmatrix" else (1 - c, 0)
    exp["reads"] = (d["Com_select"] - fs, reads)
    exp["writes"] = (d["Com_insert"] + d["Com_update"] + d["Com_delete"] - fw, writes)
print(("MISMATCH " if any(g != e for g, e in exp.values()) else "ok ") + ", ".join(
    f"{k}: server {g}, tool {e}" for k, (g, e) in exp.items()) + f" (deadlocks {dl})")
PY
)
  bench_check "$1" "$2" "$3" "${text%% *}" "${text#* }"
}

run_one() { # tool threads round point
  local out="$WORK/$FAMILY-$1-$2-$3" cpu0 cpu1 tps tx err ended reads writes st
  next_ids "$1" "$out.ids0"
  counters "$(tables_of "$1" | cut -d' ' -f1)" "$out.before"
  cpu0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  BENCH_WRAP=(bench_time "$out.time" taskset -c "$CLIENT_CPU")
  if [ "$1" = rmatrix ]; then
    read -r tps tx err ended reads writes st < <(run_rmatrix "$2" "$out")
  else
    read -r tps tx err ended reads writes st < <(run_sysbench "$2" "$out")
  fi
  cpu1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  counters "$(tables_of "$1" | cut -d' ' -f1)" "$out.after"
  [ "$st" = ok ] || { echo "$1 run failed: $out.*" >&2; exit 1; }
  next_ids "$1" "$out.ids1"
  check "$4" "$3" "$1" "$2" "$tx" "$err" "$ended" "$reads" "$writes" "$out.before" "$out.after"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$4" "$3" "$FIRST" "$1" "$tps" "$tx" \
    "$(awk '{print $2 + $3}' "$out.time")" "$((cpu1 - cpu0))" >>"$WORK/runs.tsv"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$4" "$1" "$FAMILY" "$tx" "$out.before" "$out.after" \
    "$SECS" "$(inserted "$1" "$out.ids0" "$out.ids1" | tr ' ' '\t')" >>"$WORK/extra.tsv"
}

load() {
  sql "$([ "$FAMILY" = mariadb ] && echo mysql || echo postgres)" "CREATE DATABASE sbtpcc" >/dev/null
  local t0
  t0=$(date +%s)
  matrix 1 1s
  "$RMATRIX" run "$WORK/m.yaml" --out "$WORK/$FAMILY-load" --quiet >/dev/null 2>&1 ||
    { echo "rmatrix's tpcc load failed: $WORK/$FAMILY-load" >&2; exit 1; }
  echo "rmatrix loaded $WAREHOUSES warehouses in $(($(date +%s) - t0)) s" >&2
  t0=$(date +%s)
  sysbench_tpcc "$WAREHOUSES" prepare
  "${SB_CMD[@]}" >"$WORK/$FAMILY-sysbench-prepare.out" 2>&1 ||
    { echo "sysbench-tpcc prepare failed: $WORK/$FAMILY-sysbench-prepare.out" >&2; exit 1; }
  echo "sysbench-tpcc loaded $WAREHOUSES warehouses in $(($(date +%s) - t0)) s (30 s of it its own sleep)" >&2
  if [ "$FAMILY" = postgres ]; then
    sql tpcc ANALYZE >/dev/null
    sql sbtpcc ANALYZE >/dev/null
  fi
}


for FAMILY in $FAMILIES; do
  "start_$FAMILY"
  echo "server $IMAGE on CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; $RMATRIX" >&2
  load
  for t in $THREADS; do
    point="$FAMILY x$t"
    for round in $(seq "$ROUNDS"); do
      if [ $((round % 2)) -eq 1 ]; then order="rmatrix sysbench"; else order="sysbench rmatrix"; fi
      FIRST=${order%% *}
      for tool in $order; do run_one "$tool" "$t" "$round" "$point"; done
      echo "done: $point round $round" >&2
    done
  done
  docker rm -f "$NAME" >/dev/null
done

echo "rmatrix tpcc vs sysbench-tpcc $PIN ($(sysbench --version)), ${SECS} s per run, $WAREHOUSES warehouses each"
echo
bench_report sysbench transaction
echo
echo "Per run, median over the rounds, rmatrix / sysbench-tpcc: New-Orders/s (committed, from"
echo "sum(d_next_o_id)); the order lines the run inserted: per order, share on the run's hottest 1%"
echo "of items, item skew (two lines on one item, x uniform), share from a remote warehouse; what"
echo "the server counted per transaction:"
echo
python3 - "$WORK/extra.tsv" <<'PY'
import sys
from statistics import median
read = lambda p: {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}
per, names = {}, {}
for line in open(sys.argv[1]):
    point, tool, family, tx, before, after, secs, orders, lines, lpo, hot1, skew, remote = line.rstrip("\n").split("\t")
    b, a = read(before), read(after)
    keys = [k for k in a if k not in ("Innodb_deadlocks", "deadlocks")]
    names[point] = keys
    row = {"New-Orders/s": int(orders) / float(secs), "lines/order": float(lpo),
           "hot 1%": float(hot1), "item skew": float(skew), "remote": float(remote)}
    row.update({k: (a[k] - b[k]) / max(int(tx), 1) for k in keys})
    per.setdefault(point, {}).setdefault(tool, []).append(row)
for family in dict.fromkeys(p.split()[0] for p in per):
    pts = [p for p in per if p.split()[0] == family]
    cols = ["New-Orders/s", "lines/order", "hot 1%", "item skew", "remote"] + names[pts[0]]
    print(f"| {family} point | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for p in pts:
        cell = lambda t, k: median(r[k] for r in per[p].get(t, [{k: 0}]))
        print(f"| {p} | " + " | ".join(f"{cell('rmatrix', k):.3g} / {cell('sysbench', k):.3g}" for k in cols) + " |")
    print()
PY
bench_finish
