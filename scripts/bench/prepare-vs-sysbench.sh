#!/usr/bin/env bash
# rmatrix's oltp prepare vs `sysbench oltp_read_write prepare`, on one MariaDB 10.11
# container: the same layout (TABLES x TABLE_SIZE rows, the `k` index), the same number of
# loading connections (THREADS: sysbench's --threads, rmatrix's prepare_threads). Rounds
# alternate which tool goes first (odd rounds rmatrix); each load starts on an empty schema.
#
# What is timed:
#   sysbench  the wall time of `sysbench ... prepare` (its connections and exit included)
#   rmatrix   the prepare as manifest.json's `data` records it (CREATE TABLE to the last
#             index), from a run of one statement against the server as `external:`
# Check, every load: each table's COUNT(*) equals TABLE_SIZE and each has its `k_<n>` index;
# a difference prints MISMATCH and the script exits 1 at the end.
#
# Usage: scripts/bench/prepare-vs-sysbench.sh [tables, default 8] [table size, default 250000]
#        [rounds, default 2]
# Env:   THREADS (default 4), BUFFER_POOL (default 1G), SERVER_CPU / CLIENT_CPU (default all),
#        IMAGE (default the first rmatrix/mariadb-10.11 image), PORT, RMATRIX.
# Needs: docker, sysbench, python3, an rmatrix/mariadb-10.11 image (any matrix with
#        `build: mariadb-10.11` makes it).
# The server: host network on 127.0.0.1, innodb_flush_log_at_trx_commit=2, labelled
# rmatrix.run=prepare-vs-sysbench, removed on exit. Exit: 0 ok, 1 a load failed or a check
# did not hold, 2 a missing tool or image.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

TABLES=${1:-8}
TABLE_SIZE=${2:-250000}
ROUNDS=${3:-2}
THREADS=${THREADS:-4}
BUFFER_POOL=${BUFFER_POOL:-1G}
NAME=rmatrix-prepare-vs-sysbench
LABEL=prepare-vs-sysbench

bench_need sysbench "apt-get install sysbench"
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need python3 "apt-get install python3"
bench_rmatrix
IMAGE=${IMAGE:-$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/mariadb-10.11 | head -1)}
[ -n "$IMAGE" ] || { echo "no rmatrix/mariadb-10.11 image: run matrices/quick.yaml once" >&2; exit 2; }
PORT=${PORT:-$(bench_free_port)}
WORK=$(mktemp -d /tmp/prepare-vs-sysbench.XXXXXX)
BENCH_PW=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
export BENCH_PW
(umask 077; printf 'mysql-password=%s\n' "$BENCH_PW" >"$WORK/sysbench.cnf")
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT

cpuset=()
[ -n "${SERVER_CPU:-}" ] && cpuset=(--cpuset-cpus="$SERVER_CPU")
client=()
[ -n "${CLIENT_CPU:-}" ] && client=(taskset -c "$CLIENT_CPU")
docker rm -f "$NAME" >/dev/null 2>&1 || true
docker run -d --name "$NAME" --label "rmatrix.run=$LABEL" --network host "${cpuset[@]}" \
  -e MARIADB_ROOT_PASSWORD="$BENCH_PW" "$IMAGE" --port="$PORT" --bind-address=127.0.0.1 \
  --innodb-buffer-pool-size="$BUFFER_POOL" --innodb-flush-log-at-trx-commit=2 >/dev/null
for _ in $(seq 120); do
  docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 1
done
docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null
rows=$((TABLES * TABLE_SIZE))
echo "server $IMAGE (buffer pool $BUFFER_POOL), port $PORT; $TABLES x $TABLE_SIZE rows," \
  "$THREADS loading connections; $RMATRIX" >&2

sql() { docker exec "$NAME" mariadb -uroot -N -B -e "$1"; }
fresh() { sql "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"; }

failed=0
check() { # tool round
  local t n k
  for t in $(seq "$TABLES"); do
    n=$(sql "SELECT COUNT(*) FROM sbtest.sbtest$t")
    k=$(sql "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = 'sbtest'
      AND table_name = 'sbtest$t' AND index_name = 'k_$t'")
    if [ "$n" != "$TABLE_SIZE" ] || [ "$k" = 0 ]; then
      echo "MISMATCH $1 round $2: sbtest$t has $n rows (want $TABLE_SIZE), k_$t index columns $k" >&2
      failed=1
    fi
  done
}

run_sysbench() {
  local start end
  start=$(date +%s.%N)
  "${client[@]}" sysbench --config-file="$WORK/sysbench.cnf" --db-driver=mysql \
    --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root --mysql-db=sbtest \
    --tables="$TABLES" --table_size="$TABLE_SIZE" --threads="$THREADS" oltp_read_write \
    prepare >"$WORK/sysbench.out" 2>&1 || { cat "$WORK/sysbench.out" >&2; failed=1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}

run_rmatrix() { # round
  cat >"$WORK/m.yaml" <<YAML
name: prepare
servers:
  bench: {external: {host: 127.0.0.1, port: $PORT, user: root, password_env: BENCH_PW}}
workloads:
  w: {oltp: {test: oltp_point_select, tables: $TABLES, table_size: $TABLE_SIZE, prepare_threads: $THREADS}}
length: 1
YAML
  "${client[@]}" "$RMATRIX" run "$WORK/m.yaml" --out "$WORK/r$1" --quiet >/dev/null \
    2>"$WORK/r$1.err" || { cat "$WORK/r$1.err" >&2; failed=1; }
  python3 - "$WORK/r$1/manifest.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1])).get("data", [])
print(f"{data[0]['seconds']:.2f}" if data else "nan")
PY
}

printf 'round\tfirst\ttool\tseconds\trows/s\n' >"$WORK/prepare.tsv"
for r in $(seq "$ROUNDS"); do
  order=(rmatrix sysbench)
  [ $((r % 2)) -eq 0 ] && order=(sysbench rmatrix)
  for tool in "${order[@]}"; do
    fresh
    s=$(if [ "$tool" = rmatrix ]; then run_rmatrix "$r"; else run_sysbench; fi)
    check "$tool" "$r"
    python3 -c "s=float('$s'); print('$r\t${order[0]}\t$tool\t$s\t' + (f'{$rows/s:.0f}' if s == s else 'nan'))" \
      >>"$WORK/prepare.tsv"
    echo "round $r: $tool $s s" >&2
  done
done
column -t -s $'\t' "$WORK/prepare.tsv"
python3 - "$WORK/prepare.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["round"], {})[r["tool"]] = float(r["seconds"])
ratios = [v["rmatrix"] / v["sysbench"] for v in by.values() if "rmatrix" in v and "sysbench" in v]
if ratios:
    print(f"seconds rmatrix / sysbench, per round: {' '.join(f'{x:.2f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.2f}")
PY
echo "work files: $WORK" >&2
exit "$failed"
