#!/usr/bin/env bash
# rmatrix's redis workload vs redis-benchmark, side by side: one Redis 7.0 server (no
# persistence), the same clients, pipeline, keyspace (-r 100000) and request count, runs
# alternating between the two tools. Prints a Markdown table: median requests/s of each, the
# ratio rmatrix / redis-benchmark, and client CPU (user + sys of the whole process, from
# /usr/bin/time) per 10,000 requests. The server is pinned to CPU 0 and both tools to CPU 1
# (as the redis-benchmark docs advise), so neither tool gains from where the scheduler puts it.
# Usage: scripts/bench-vs-redis-benchmark.sh [rounds]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
target=${CARGO_TARGET_DIR:-target}
cargo build --release --quiet
rmatrix="$target/release/rmatrix"
command -v redis-benchmark >/dev/null || { echo "install Debian's redis-tools" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "install Debian's time package" >&2; exit 1; }

work=$(mktemp -d)
label="bench-vs-rb-$$"
name="rmatrix-$label"
cleanup() { docker rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

image=rmatrix-bench/redis-7.0
docker build -q --network host --build-arg suite=bookworm --build-arg package=redis-server \
  -t "$image" containers/redis >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export BENCH_REDIS_PASSWORD
BENCH_REDIS_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
printf 'save ""\nappendonly no\n' >"$work/redis.conf"
docker run -d --name "$name" --label "rmatrix.run=$label" --network host --cpuset-cpus 0 \
  -e REDIS_PASSWORD="$BENCH_REDIS_PASSWORD" -v "$work/redis.conf:/etc/rmatrix/redis.conf:ro" \
  "$image" --port "$port" --bind 127.0.0.1 >/dev/null
for _ in $(seq 50); do
  redis-cli -p "$port" -a "$BENCH_REDIS_PASSWORD" --no-auth-warning ping 2>/dev/null | grep -q PONG && break
  sleep 0.2
done

# Prints "rps cpu_seconds" for one redis-benchmark run.
run_rb() { # test clients pipeline requests
  /usr/bin/time -f '%U %S' -o "$work/time" taskset -c 1 redis-benchmark -h 127.0.0.1 -p "$port" \
    -a "$BENCH_REDIS_PASSWORD" -c "$2" -P "$3" -n "$4" -r 100000 -t "$1" --csv >"$work/rb.csv" 2>/dev/null
  rps=$(awk -F'","' 'NR==2 {print $2}' "$work/rb.csv")
  echo "$rps $(awk '{print $1 + $2}' "$work/time")"
}

# Prints "rps cpu_seconds" for one rmatrix run against the same (external) server.
run_rm() { # test clients pipeline requests
  local dir="$work/run-$RANDOM$RANDOM"
  cat >"$work/m.yaml" <<EOF
servers:
  redis: {kind: redis, external: {port: $port, password_env: BENCH_REDIS_PASSWORD}}
workloads:
  w: {redis: {test: $1, keyspace: 100000, pipeline: $3}}
concurrency: [$2]
length: $4
EOF
  /usr/bin/time -f '%U %S' -o "$work/time" taskset -c 1 "$rmatrix" run "$work/m.yaml" --out "$dir" --quiet 2>/dev/null
  rps=$(python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r["qps"] if r["status"]=="ok" else 0)' "$dir/results.csv")
  echo "$rps $(awk '{print $1 + $2}' "$work/time")"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "| test | clients | pipeline | requests | redis-benchmark req/s | rmatrix req/s | ratio | redis-benchmark CPU ms/10k | rmatrix CPU ms/10k |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for cfg in "1 1 100000" "50 1 300000" "50 16 2000000"; do
  read -r c p n <<<"$cfg"
  for t in set get; do
    : >"$work/rb.txt"; : >"$work/rm.txt"
    for _ in $(seq "$rounds"); do
      run_rb "$t" "$c" "$p" "$n" >>"$work/rb.txt"
      run_rm "$t" "$c" "$p" "$n" >>"$work/rm.txt"
    done
    rb_rps=$(cut -d' ' -f1 "$work/rb.txt" | median)
    rm_rps=$(cut -d' ' -f1 "$work/rm.txt" | median)
    rb_cpu=$(cut -d' ' -f2 "$work/rb.txt" | median)
    rm_cpu=$(cut -d' ' -f2 "$work/rm.txt" | median)
    awk -v t="$t" -v c="$c" -v p="$p" -v n="$n" -v a="$rb_rps" -v b="$rm_rps" -v ca="$rb_cpu" -v cb="$rm_cpu" \
      'BEGIN { printf "| %s | %d | %d | %d | %.0f | %.0f | %.2f | %.1f | %.1f |\n", t, c, p, n, a, b, b / a, ca * 1e7 / n, cb * 1e7 / n }'
  done
done
