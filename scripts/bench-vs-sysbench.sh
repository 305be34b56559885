#!/usr/bin/env bash
# rmatrix's native oltp driver vs sysbench 1.0, side by side, against the same MariaDB
# container and the same sbtest tables. For each test and thread count the two clients run
# alternately; the table shows throughput and client CPU seconds per 1,000 transactions,
# both from the processes' own accounting (GNU time: user + system of the whole process).
# The server is pinned to one core and the clients to another.
#
# Usage: scripts/bench-vs-sysbench.sh [seconds per run, default 10] [rounds, default 1]
# Needs: docker, sysbench 1.0 (apt-get install sysbench), GNU time, a release build
# (cargo build --release; RMATRIX=path/to/rmatrix overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
ROUNDS=${2:-1}
RMATRIX=${RMATRIX:-${CARGO_TARGET_DIR:-target}/release/rmatrix}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
THREADS=${THREADS:-"1 4 16 64"}
TESTS=${TESTS:-"oltp_point_select oltp_read_write"}
PORT=${PORT:-33961}
NAME=rmatrix-bench-vs-sysbench
export BENCH_PW=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
WORK=$(mktemp -d /tmp/bench-vs-sysbench.XXXXXX)
trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT

IMAGE=$(docker images --format '{{.Repository}}:{{.Tag}}' rmatrix/mariadb-10.11 | head -1)
[ -n "$IMAGE" ] || { echo "no rmatrix/mariadb-10.11 image: run any matrix with it once (e.g. matrices/quick.yaml)" >&2; exit 2; }
docker rm -f "$NAME" >/dev/null 2>&1 || true
docker run -d --name "$NAME" --label rmatrix.run=bench-vs-sysbench --network host \
  --cpuset-cpus="$SERVER_CPU" -e MARIADB_ROOT_PASSWORD="$BENCH_PW" "$IMAGE" \
  --port="$PORT" --bind-address=127.0.0.1 --max-connections=1000 \
  --max-prepared-stmt-count=100000 --innodb-buffer-pool-size=512M \
  --innodb-flush-log-at-trx-commit=2 >/dev/null
for _ in $(seq 120); do
  docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 1
done

SB=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root
    --mysql-password="$BENCH_PW" --mysql-db=sbtest --tables="$TABLES" --table_size="$TABLE_SIZE")

matrix() { # test threads
  cat >"$WORK/m.yaml" <<YAML
name: bench
servers:
  bench: {external: {host: 127.0.0.1, port: $PORT, user: root, password_env: BENCH_PW}}
workloads:
  w: {oltp: {test: $1, tables: $TABLES, table_size: $TABLE_SIZE}}
concurrency: [$2]
length: ${SECS}s
YAML
}

# rmatrix loads the tables (parallel prepare); sysbench then uses the same ones.
matrix oltp_point_select 1
sed -i "s/length: .*/length: 1/" "$WORK/m.yaml"
start=$(date +%s.%N)
"$RMATRIX" run "$WORK/m.yaml" --out "$WORK/prepare" --quiet >/dev/null 2>&1
echo "prepare (rmatrix, ${TABLES}x${TABLE_SIZE} rows): $(echo "$(date +%s.%N) - $start" | bc) s" >&2

# %U %S: user and system CPU seconds; %M: max RSS in KB.
run_rmatrix() { # test threads out
  matrix "$1" "$2"
  /usr/bin/time -f '%U %S %M' -o "$3.time" taskset -c "$CLIENT_CPU" \
    "$RMATRIX" run "$WORK/m.yaml" --out "$3" --quiet >/dev/null 2>"$3.err"
  python3 - "$3/results.csv" <<'PY'
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
print(r["tps"], r["commits"], r["status"])
PY
}
run_sysbench() { # test threads out
  /usr/bin/time -f '%U %S %M' -o "$3.time" taskset -c "$CLIENT_CPU" \
    "${SB[@]}" --threads="$2" --time="$SECS" "$1" run >"$3.out" 2>&1
  awk '/transactions:/ {gsub(/[()]/, "", $3); print $3, $2, "ok"}' "$3.out"
}
cpu_of() { awk '{print $1 + $2}' "$1.time"; }
rss_mb() { awk '{printf "%.0f", $3 / 1024}' "$1.time"; }

# One line per run pair: test threads round rmatrix-tps sysbench-tps rmatrix-cpu rmatrix-tx
# sysbench-cpu sysbench-tx rmatrix-rss sysbench-rss. Odd rounds start with rmatrix, even
# rounds with sysbench, so a drifting machine does not favour one side.
: >"$WORK/pairs.tsv"
for test in $TESTS; do
  for t in $THREADS; do
    for round in $(seq "$ROUNDS"); do
      r="$WORK/r-$test-$t-$round"; s="$WORK/s-$test-$t-$round"
      if [ $((round % 2)) -eq 1 ]; then
        read -r rtps rtx rstatus < <(run_rmatrix "$test" "$t" "$r")
        read -r stps stx sstatus < <(run_sysbench "$test" "$t" "$s")
      else
        read -r stps stx sstatus < <(run_sysbench "$test" "$t" "$s")
        read -r rtps rtx rstatus < <(run_rmatrix "$test" "$t" "$r")
      fi
      [ "$rstatus" = ok ] || { echo "rmatrix run failed: $r.err $r/results.csv" >&2; exit 1; }
      [ "$sstatus" = ok ] || { echo "sysbench run failed: $s.out" >&2; exit 1; }
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$test" "$t" "$round" \
        "$rtps" "$stps" "$(cpu_of "$r")" "$rtx" "$(cpu_of "$s")" "$stx" "$(rss_mb "$r")" \
        "$(rss_mb "$s")" >>"$WORK/pairs.tsv"
      echo "done: $test $t threads, round $round" >&2
    done
  done
done

python3 - "$WORK/pairs.tsv" "$ROUNDS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
rounds = int(sys.argv[2])
head = ("| test | threads | rmatrix tps | sysbench tps | ratio | rmatrix CPU s/1k tx "
        "| sysbench CPU s/1k tx | rmatrix RSS MB | sysbench RSS MB |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
def line(test, t, rtps, stps, rcpk, scpk, rrss, srss):
    return (f"| {test} | {t} | {rtps:.0f} | {stps:.0f} | {rtps / stps:.2f} | "
            f"{rcpk:.3f} | {scpk:.3f} | {rrss} | {srss} |")
points = {}
for test, t, rnd, rtps, stps, rcpu, rtx, scpu, stx, rrss, srss in rows:
    rtps, stps, rcpu, rtx, scpu, stx = map(float, (rtps, stps, rcpu, rtx, scpu, stx))
    points.setdefault((test, int(t)), []).append(
        (rtps, stps, 1000 * rcpu / rtx, 1000 * scpu / stx, rrss, srss, rnd))
if rounds > 1:
    print("Every round:\n")
    print(head.replace("| threads |", "| threads | round |").replace("|---:|", "|---:|---:|", 1))
    for (test, t), ps in points.items():
        for rtps, stps, rcpk, scpk, rrss, srss, rnd in ps:
            print(line(test, f"{t} | {rnd}", rtps, stps, rcpk, scpk, rrss, srss))
    print(f"\nMedians over {rounds} rounds (the ratio is the median of the per-round ratios):\n")
print(head)
med = statistics.median
for (test, t), ps in points.items():
    ratio = med(p[0] / p[1] for p in ps)
    rtps, stps = med(p[0] for p in ps), med(p[1] for p in ps)
    l = line(test, t, rtps, stps, med(p[2] for p in ps), med(p[3] for p in ps),
             max(p[4] for p in ps), max(p[5] for p in ps))
    cells = l.split(" | ")
    cells[4] = f"{ratio:.2f}"
    print(" | ".join(cells))
PY

# Client memory at 512 connections (rmatrix, point selects).
r="$WORK/r-mem-512"
read -r rtps _ rstatus < <(run_rmatrix oltp_point_select 512 "$r")
echo
echo "rmatrix at 512 connections (oltp_point_select): max RSS $(rss_mb "$r") MB, $rtps tps ($rstatus)"
echo "raw outputs: $WORK" >&2
