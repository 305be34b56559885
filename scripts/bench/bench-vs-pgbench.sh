#!/usr/bin/env bash
# rmatrix against the PostgreSQL peers, side by side, on one PostgreSQL 15 container pinned
# to SERVER_CPU with both clients on CLIENT_CPU:
#   pgbench:  rmatrix's `pgbench` kind vs plain pgbench (the same built-in script, clients
#             and protocol, 1 pgbench thread);
#   sysbench: rmatrix's native `oltp` vs `sysbench --db-driver=pgsql` (the same test,
#             tables and threads), where rmatrix's oltp speaks PostgreSQL.
# For each point the two run alternately, odd rounds rmatrix first, even rounds the peer.
# Per point and round: transactions/s, client CPU per transaction (user + sys of the whole
# client process tree, from the kernel's rusage), the server container's CPU per
# transaction (its cgroup counter before and after), then per point the medians and the
# MEDIAN OF THE PER-ROUND RATIOS rmatrix / peer (bench_report in bench-vs-lib.sh).
#
# Count check, every run: the server's xact_commit summed over the benchmark databases
# (pg_stat_database, read from database `postgres`, which counts in none of them) before
# and after the run, once the run's sessions have ended and the statistics agree twice:
#   pgbench:  transactions + one per session start (each client's and pgbench's own) + the
#             two queries of pgbench's own session (scale, partitions) + with -M prepared
#             one per client (its statements' preparation); rmatrix's kind runs the same
#             pgbench, and adds its own session in database pgbench: its start and the
#             SELECT of its marker table, which tokio-postgres prepares (one implicit
#             transaction) and then executes (another): 3.
#   sysbench:  transactions + per client: its session start, each statement it prepares
#             (PQprepare outside a transaction block is one implicit transaction: per table
#             1 for oltp_point_select, 5 read_only, 4 write_only, 9 read_write) and, except
#             in oltp_point_select, its prepared BEGIN and COMMIT (2);
#   oltp:     transactions + per client: its session start, `SHOW server_version_num`
#             (prepared, then executed: 2), the same statements per table, and the statistics
#             flush before the measured phase (1); plus the marker check's session (3, as
#             above). rmatrix prepares no BEGIN or COMMIT. Other tests: printed as counted.
#   A fixed cost per connection, not per transaction: at 8 clients and 4 tables the
#   read_write overhead is 312 commits (sysbench) and 323 (rmatrix), a third of a 3 s run
#   on one server core, which is what a count "as counted" once looked like.
# A difference prints MISMATCH; the script goes on and exits 1 at the end.
#
# Usage: scripts/bench/bench-vs-pgbench.sh [seconds per run, default 10] [rounds, default 3]
# Env:   POINTS (default "pgbench:tpcb-like:8 pgbench:select-only:8 sysbench:oltp_point_select:8
#        sysbench:oltp_read_write:8"; each peer:test:clients), SCALE (pgbench -s, default 10),
#        TABLES / TABLE_SIZE (sysbench, default 4 / 100000), PROTOCOL (pgbench -M, default
#        prepared), SERVER_CPU / CLIENT_CPU (default 1 / 0), IMAGE (default the first
#        rmatrix/postgres-15 image), RMATRIX (default: cargo build --release).
# Needs: docker, an rmatrix/postgres-15 image (any matrix with `build: postgres-15` makes it,
#        e.g. matrices/postgres-durability.yaml), pgbench, sysbench, taskset, python3, psql.
# Exit: 0 ok; 1 a run failed or a count MISMATCH; 2 a missing tool or image.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

SECS=${1:-10}
ROUNDS=${2:-3}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
SCALE=${SCALE:-10}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
PROTOCOL=${PROTOCOL:-prepared}
POINTS=${POINTS:-"pgbench:tpcb-like:8 pgbench:select-only:8 sysbench:oltp_point_select:8 sysbench:oltp_read_write:8"}
NAME=rmatrix-bench-vs-pgbench
LABEL=bench-vs-pgbench

bench_need pgbench "apt-get install postgresql-15 (scripts/setup.sh)"
bench_need sysbench "apt-get install sysbench"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need taskset "apt-get install util-linux"
bench_need python3 "apt-get install python3"
bench_rmatrix
IMAGE=${IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/postgres-15 | head -1)}
[ -n "$IMAGE" ] || { echo "no rmatrix/postgres-15 image: run a matrix with build: postgres-15 once" >&2; exit 2; }
PORT=$(bench_free_port)

BENCH_PW=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
export BENCH_PW
WORK=$(mktemp -d /tmp/bench-vs-pgbench.XXXXXX)
: >"$WORK/all-runs.tsv"
: >"$WORK/checks.tsv"
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
# Both peers read the password from libpq's 0600 password file, rmatrix from BENCH_PW.
(umask 077; printf '127.0.0.1:%s:*:postgres:%s\n' "$PORT" "$BENCH_PW" >"$WORK/pgpass")
export PGPASSFILE="$WORK/pgpass"

docker rm -f "$NAME" >/dev/null 2>&1 || true
docker run -d --name "$NAME" --label "rmatrix.run=$LABEL" --network host \
  --cpuset-cpus="$SERVER_CPU" -e POSTGRES_PASSWORD="$BENCH_PW" "$IMAGE" \
  -c listen_addresses=127.0.0.1 -c port="$PORT" -c shared_buffers=512MB \
  -c max_connections=200 -c autovacuum=off >/dev/null
PSQL=(psql -X -q -At -h 127.0.0.1 -p "$PORT" -U postgres)
for _ in $(seq 60); do "${PSQL[@]}" -d postgres -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
"${PSQL[@]}" -d postgres -c 'SELECT 1' >/dev/null
read -r CPU_KIND CPU_FILE < <(bench_cpu_file "$NAME")
echo "server $IMAGE on CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; $RMATRIX" >&2
for db in pgbench sbtest; do "${PSQL[@]}" -d postgres -c "CREATE DATABASE $db" >/dev/null; done

# xact_commit of the benchmark databases once no client session is left and two reads
# 100 ms apart agree (a session's statistics are counted when it ends).
commits() {
  python3 - "${PSQL[@]}" <<'PY'
import subprocess, sys, time
psql = sys.argv[1:] + ["-d", "postgres", "-c"]
q = lambda s: subprocess.run(psql + [s], check=True, capture_output=True, text=True).stdout.strip()
for _ in range(500):
    if q("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
         "AND datname IN ('pgbench', 'sbtest')") == "0":
        break
    time.sleep(0.02)
last = None
for _ in range(100):
    now = q("SELECT sum(xact_commit) FROM pg_stat_database WHERE datname IN ('pgbench', 'sbtest')")
    if now == last:
        break
    last = now
    time.sleep(0.1)
print(now)
PY
}

matrix() { # peer test clients length
  local w
  case $1 in
    pgbench) w="pgbench: {builtin: $2, scale: $SCALE, protocol: $PROTOCOL}" ;;
    sysbench) w="oltp: {test: $2, tables: $TABLES, table_size: $TABLE_SIZE}" ;;
  esac
  cat >"$WORK/m.yaml" <<YAML
name: bench
servers:
  bench:
    kind: postgres
    external: {host: 127.0.0.1, port: $PORT, user: postgres, password_env: BENCH_PW, may_reset: true}
workloads:
  w: {$w}
concurrency: [$3]
length: $4
YAML
}

# Each prints "tps transactions status".
run_rmatrix() { # peer test clients out
  matrix "$1" "$2" "$3" "${SECS}s"
  "${BENCH_WRAP[@]}" "$RMATRIX" run "$WORK/m.yaml" --out "$4" --quiet >/dev/null 2>"$4.err" || true
  python3 - "$4/results.csv" <<'PY'
import csv, sys
try:
    r = next(csv.DictReader(open(sys.argv[1])))
except (OSError, StopIteration):
    print("0 0 no-results"); sys.exit()
print(r["tps"] or 0, r["commits"] or 0, r["status"])
PY
}
run_peer() { # peer test clients out
  case $1 in
    pgbench)
      "${BENCH_WRAP[@]}" pgbench -h 127.0.0.1 -p "$PORT" -U postgres -n -c "$3" -j 1 \
        -T "$SECS" -M "$PROTOCOL" -b "$2" pgbench >"$4.out" 2>&1 || true
      awk '/actually processed:/ {split($NF, a, "/"); tx = a[1]} /^tps = / {tps = $3}
           END { if (tx > 0) print tps, tx, "ok"; else print "0 0 failed" }' "$4.out" ;;
    sysbench)
      "${BENCH_WRAP[@]}" sysbench --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT" \
        --pgsql-user=postgres --pgsql-db=sbtest --tables="$TABLES" --table_size="$TABLE_SIZE" \
        --threads="$3" --time="$SECS" "$2" run >"$4.out" 2>&1 || true
      awk '/transactions:/ {gsub(/[()]/, "", $3); tps = $3; tx = $2}
           END { if (tx > 0) print tps, tx, "ok"; else print "0 0 failed" }' "$4.out" ;;
  esac
}

# The tables each peer runs on, loaded once by rmatrix: pgbench's by its pgbench kind
# (`pgbench -i`, and the marker that keeps it from initialising again), sysbench's by its
# oltp prepare; the peers then use the same.
matrix pgbench select-only 1 1
"$RMATRIX" run "$WORK/m.yaml" --out "$WORK/prepare-pgbench" --quiet >/dev/null 2>&1 ||
  { echo "rmatrix's pgbench -i failed: $WORK/prepare-pgbench" >&2; exit 1; }
case " $POINTS " in *" sysbench:"*)
  matrix sysbench oltp_point_select 1 1
  "$RMATRIX" run "$WORK/m.yaml" --out "$WORK/prepare" --quiet >/dev/null 2>&1 ||
    { echo "rmatrix's oltp prepare on PostgreSQL failed: $WORK/prepare" >&2; exit 1; } ;;
esac

# The statements a test prepares per table on each connection (sysbench's thread_init), for
# the tests whose count is checked; the others are printed as counted.
oltp_statements() {
  case $1 in
    oltp_point_select) echo 1 ;;  # point select
    oltp_write_only) echo 4 ;;    # index update, non-index update, delete, insert
    oltp_read_only) echo 5 ;;     # point, simple range, sum, order, distinct
    oltp_read_write) echo 9 ;;    # both
    *) return 1 ;;
  esac
}

run_one() { # tool peer test clients round point
  local out="$WORK/$1-$2-$3-$4-$5" cpu0 cpu1 c0 c1 tps tx st expect
  c0=$(commits)
  cpu0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  BENCH_WRAP=(bench_time "$out.time" taskset -c "$CLIENT_CPU")
  if [ "$1" = rmatrix ]; then
    read -r tps tx st < <(run_rmatrix "$2" "$3" "$4" "$out")
  else
    read -r tps tx st < <(run_peer "$2" "$3" "$4" "$out")
  fi
  cpu1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
  c1=$(commits)
  [ "$st" = ok ] || { echo "$1 run failed: $out.*" >&2; exit 1; }
  if [ "$2" = pgbench ]; then
    expect=$((tx + $4 + 1 + 2))
    [ "$PROTOCOL" = prepared ] && expect=$((expect + $4))
    [ "$1" = rmatrix ] && expect=$((expect + 3))
    if [ $((c1 - c0)) -eq "$expect" ]; then v=ok; else v=MISMATCH; fi
    bench_check "$6" "$5" "$1" "$v" "$tx transactions; server xact_commit $((c1 - c0)) (expected $expect)"
  elif stmts=$(oltp_statements "$3"); then
    if [ "$1" = rmatrix ]; then
      expect=$((tx + 3 + $4 * (1 + 2 + stmts * TABLES + 1)))
    else
      expect=$((tx + $4 * (1 + stmts * TABLES)))
      [ "$3" = oltp_point_select ] || expect=$((expect + $4 * 2))
    fi
    if [ $((c1 - c0)) -eq "$expect" ]; then v=ok; else v=MISMATCH; fi
    bench_check "$6" "$5" "$1" "$v" "$tx transactions; server xact_commit $((c1 - c0)) (expected $expect)"
  else
    bench_check "$6" "$5" "$1" ok "$tx transactions; server xact_commit $((c1 - c0)) (as counted)"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$6" "$5" "$FIRST" "$1" "$tps" "$tx" \
    "$(awk '{print $2 + $3}' "$out.time")" "$((cpu1 - cpu0))" >>"$WORK/all-runs.tsv"
}

for p in $POINTS; do
  IFS=: read -r peer test clients <<<"$p"
  point="$peer $test x$clients"
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then order="rmatrix $peer"; else order="$peer rmatrix"; fi
    FIRST=${order%% *}
    for tool in $order; do run_one "$tool" "$peer" "$test" "$clients" "$round" "$point"; done
    echo "done: $point round $round" >&2
  done
done

# One table per peer (bench_report reads $WORK/runs.tsv: that peer's points).
for peer in pgbench sysbench; do
  grep "^$peer " "$WORK/all-runs.tsv" >"$WORK/runs.tsv" || continue
  echo
  echo "## rmatrix vs $peer"
  bench_report "$peer" transaction
done
bench_finish
