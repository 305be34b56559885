#!/usr/bin/env bash
# What one read of the per-second server counters (server_seconds.csv) costs the server: N
# reads on one connection of an otherwise idle server, as rmatrix's reader sends them
# (MariaDB 10.11: SHOW GLOBAL STATUS; Redis 7.0: INFO all), with the server's cgroup CPU
# before and after and its counters before and after. Prints the server's CPU per read, and
# every counter that moved by at least one per read, per read: what a cell's counters carry
# for each second of sampling.
#
# Usage: scripts/bench/counter-read-cost.sh [N, default 2000]
# Env:   SERVER_CPU (default 1), the rmatrix/mariadb-10.11 image (any matrix with
#        `build: mariadb-10.11` makes it).
# Needs: docker, mariadb (client), redis-cli, python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/bench-vs-lib.sh
. scripts/bench/bench-vs-lib.sh

N=${1:-2000}
SERVER_CPU=${SERVER_CPU:-1}
bench_need docker "install Docker (containers/setup-docker.sh)"
bench_need mariadb "apt-get install mariadb-client"
bench_need redis-cli "apt-get install redis-tools"
bench_need python3 "apt-get install python3"
MARIADB_IMAGE=$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 '^rmatrix/mariadb-10.11' || true)
[ -n "$MARIADB_IMAGE" ] || { echo "no rmatrix/mariadb-10.11 image: run a matrix with build: mariadb-10.11 first" >&2; exit 2; }

WORK=$(mktemp -d /tmp/counter-read-cost.XXXXXX)
LABEL=counter-read-cost
NAME=rmatrix-bench-read-cost-redis IMAGE=rmatrix-bench/redis-7.0
MYSQL_NAME=rmatrix-bench-read-cost-mariadb
bench_start_redis
trap 'docker rm -f "$NAME" "$MYSQL_NAME" >/dev/null 2>&1 || true' EXIT
read -r REDIS_KIND REDIS_FILE <<<"$CPU_KIND $CPU_FILE"
PORT_REDIS=$PORT
PORT=$(bench_free_port)
NAME=$MYSQL_NAME bench_start_mariadb "$MARIADB_IMAGE"

# Counters that moved between two snapshots (name value lines), per read.
per_read() { # before after reads
  python3 - "$1" "$2" "$3" <<'PY'
import sys
def load(p):
    out = {}
    for line in open(p):
        k, _, v = line.strip().partition("\t")
        try:
            out[k] = int(v)
        except ValueError:
            pass
    return out
b, a, n = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
moved = {k: (a[k] - b.get(k, 0)) / n for k in a if a[k] - b.get(k, 0) >= n}
for k in sorted(moved):
    print(f"  {k:40s} {moved[k]:12.2f} per read")
PY
}

mysql_status() { mariadb --defaults-extra-file="$WORK/client.cnf" -N -e 'SHOW GLOBAL STATUS' >"$1"; }
redis_status() { # INFO all as name<TAB>value, commandstats' calls as cmdstat_<name>
  redis-cli -p "$PORT_REDIS" info all | tr -d '\r' | python3 -c '
import sys
for l in sys.stdin:
    k, _, v = l.strip().partition(":")
    if k.startswith("cmdstat_"):
        f = dict(x.split("=") for x in v.split(","))
        print(k + "\t" + f["calls"]); print(k + ".usec\t" + f["usec"])
    elif k and not k.startswith("#"):
        print(k + "\t" + v)
' >"$1"
}

sleep 2
# MariaDB: N statements in one session, as one connection would send them once a second.
mysql_status "$WORK/m.before"
c0=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
python3 -c 'import sys; print("SHOW GLOBAL STATUS;\n" * int(sys.argv[1]), end="")' "$N" \
  | mariadb --defaults-extra-file="$WORK/client.cnf" -N >/dev/null
c1=$(bench_cpu_us "$CPU_KIND" "$CPU_FILE")
mysql_status "$WORK/m.after"
echo "MariaDB 10.11 ($MARIADB_IMAGE), $N x SHOW GLOBAL STATUS on one connection:"
awk -v n="$N" -v us=$((c1 - c0)) 'BEGIN { printf "  server CPU: %.1f us per read (%.3f%% of one core at one read a second)\n", us / n, us / n / 1e4 }'
per_read "$WORK/m.before" "$WORK/m.after" "$N"

# Redis: N x INFO all through one redis-cli connection.
redis_status "$WORK/r.before"
c0=$(bench_cpu_us "$REDIS_KIND" "$REDIS_FILE")
redis-cli -p "$PORT_REDIS" -r "$N" info all >/dev/null
c1=$(bench_cpu_us "$REDIS_KIND" "$REDIS_FILE")
redis_status "$WORK/r.after"
echo "Redis 7.0, $N x INFO all on one connection:"
awk -v n="$N" -v us=$((c1 - c0)) 'BEGIN { printf "  server CPU: %.1f us per read (%.3f%% of one core at one read a second)\n", us / n, us / n / 1e4 }'
per_read "$WORK/r.before" "$WORK/r.after" "$N"
rm -rf "$WORK"
