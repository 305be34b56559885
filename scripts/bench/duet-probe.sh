#!/usr/bin/env bash
# Whether measuring two servers at the same time (duet) cancels this host's noise: two
# servers of one Redis image, A on CPU 0 and B on CPU 1, each loaded by its own
# redis-benchmark pinned beside it, both at once; every 0.5 s both servers' command
# counters are read. Prints, per window length, the spread (sd) of each side's log
# throughput and of the log-ratio B / A. A ratio spread well under the sides' own would mean
# the noise is shared and duet rounds would cancel it; about the same means it is not.
#
# Usage: scripts/bench/duet-probe.sh
# Env: IMAGE (default: the newest rmatrix/redis-7.0 image), SAMPLES (40), CLIENTS (4).
set -euo pipefail
IMAGE=${IMAGE:-$(docker images rmatrix/redis-7.0 --format '{{.Repository}}:{{.Tag}}' | head -1)}
SAMPLES=${SAMPLES:-40} CLIENTS=${CLIENTS:-4}
[ -n "$IMAGE" ] || { echo "no rmatrix/redis-7.0 image: run scripts/setup.sh" >&2; exit 2; }
out=$(mktemp)
names=(rmatrix-duet-a rmatrix-duet-b)
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  docker rm -f "${names[@]}" >/dev/null 2>&1 || true
  rm -f "$out"
}
trap cleanup EXIT
docker rm -f "${names[@]}" >/dev/null 2>&1 || true
for i in 0 1; do
  docker run -d --name "${names[$i]}" --cpuset-cpus "$i" --network host --entrypoint redis-server \
    "$IMAGE" --port $((7101 + i)) --save '' --appendonly no >/dev/null
done
sleep 1
for i in 0 1; do
  taskset -c "$i" redis-benchmark -p $((7101 + i)) -t get -c "$CLIENTS" -n 1000000000 -r 10000 -q \
    >/dev/null 2>&1 &
  pids+=($!)
done
sleep 2
count() { redis-cli -p "$1" info stats | tr -d '\r' | sed -n 's/^total_commands_processed://p'; }
for _ in $(seq 1 "$SAMPLES"); do
  echo "$(count 7101) $(count 7102)" >> "$out"
  sleep 0.5
done
/usr/bin/python3 - "$out" <<'PY'
import math, statistics as st, sys
v = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
for w in (1, 2, 4):
    idx = list(range(0, len(v), w))
    la = [math.log(v[j][0] - v[i][0]) for i, j in zip(idx, idx[1:])]
    lb = [math.log(v[j][1] - v[i][1]) for i, j in zip(idx, idx[1:])]
    lr = [b - a for a, b in zip(la, lb)]
    print(f"{w * 0.5:.1f} s windows ({len(lr)}): sd of log A {st.stdev(la):.3f}, "
          f"of log B {st.stdev(lb):.3f}, of log B/A {st.stdev(lr):.3f}")
PY
