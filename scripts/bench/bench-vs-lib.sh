# Helpers shared by the side-by-side scripts (scripts/bench/bench-vs-*.sh). Sourced, not run.
#
# Every side-by-side script runs rmatrix and a peer tool against the same server container,
# alternating which goes first (odd rounds rmatrix, even rounds the peer), and records one
# line per tool run in $WORK/runs.tsv:
#   point  round  first  tool  rate(op/s)  ops  client_cpu_s  server_cpu_us
# bench_report renders that file: every round, then per point the median of each tool's
# values and the MEDIAN OF THE PER-ROUND RATIOS rmatrix / peer (throughput, client CPU per
# operation, server CPU per operation) with the 95% interval of their geometric mean (from
# `rmatrix ratio`: the per-round ratios on the log scale, Student's t), and the targets:
# "ok" when the median meets a target, "MISS" when the whole interval is on the wrong side,
# "noise" when the median misses but the interval reaches the target (these rounds cannot tell). Last, the
# server ratio by which tool went first: a slot effect larger than the tool effect says the
# machine drifted during the rounds. Each run's count check goes
# through bench_check; bench_finish prints the checks and exits 1 if one failed.
# shellcheck shell=bash

bench_need() { # command, hint
  command -v "$1" >/dev/null 2>&1 || { echo "missing $1: $2" >&2; exit 2; }
}

# RMATRIX as given, else the release build (cargo builds it when out of date).
bench_rmatrix() {
  if [ -z "${RMATRIX:-}" ]; then
    bench_need cargo "install Rust, or point RMATRIX at an rmatrix binary"
    cargo build --release --quiet
    RMATRIX=${CARGO_TARGET_DIR:-target}/release/rmatrix
  fi
  [ -x "$RMATRIX" ] || { echo "no rmatrix binary at $RMATRIX" >&2; exit 2; }
}

# Where a container's CPU counter is, as "v1 FILE" (cpuacct.usage, ns) or "v2 FILE"
# (cpu.stat usage_usec), found through its main process's /proc/<pid>/cgroup; the systemd
# driver's docker-<id>.scope as a fallback.
bench_cpu_file() { # container
  local pid id line ctl path f root
  pid=$(docker inspect -f '{{.State.Pid}}' "$1")
  id=$(docker inspect -f '{{.Id}}' "$1")
  if [ -r "/proc/$pid/cgroup" ]; then
    line=$(grep -E '^[0-9]+:([^:]*,)?cpuacct(,[^:]*)?:' "/proc/$pid/cgroup" || true)
    if [ -n "$line" ]; then
      ctl=$(cut -d: -f2 <<<"$line")
      path=$(cut -d: -f3- <<<"$line")
      f="/sys/fs/cgroup/$ctl$path/cpuacct.usage"
      [ -r "$f" ] && { echo "v1 $f"; return; }
    fi
    path=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
      f="$root$path/cpu.stat"
      [ -n "$path" ] && [ -r "$f" ] && { echo "v2 $f"; return; }
    done
  fi
  for f in "/sys/fs/cgroup/system.slice/docker-$id.scope/cpu.stat" \
           "/sys/fs/cgroup/cpuacct/docker/$id/cpuacct.usage"; do
    [ -r "$f" ] || continue
    case $f in *cpu.stat) echo "v2 $f" ;; *) echo "v1 $f" ;; esac
    return
  done
  echo "cannot find the cgroup CPU counter of container $1 (pid $pid)" >&2
  return 1
}

# CPU microseconds a container has used, from the file bench_cpu_file found.
bench_cpu_us() { # "v1 FILE" | "v2 FILE" (one word each)
  case $1 in
    v1) echo $(($(cat "$2") / 1000)) ;;
    v2) awk '$1 == "usage_usec" {print $2}' "$2" ;;
  esac
}

# Runs a command and writes "elapsed user sys maxrss_kb" of its whole process tree to FILE:
# the kernel's accounting of the waited-for children (wait4's rusage, what GNU time reads),
# printed to the microsecond instead of GNU time's 10 ms. Exits with the command's status.
bench_time() { # FILE command...
  python3 -c '
import os, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[2:])
_, status, ru = os.wait4(p.pid, 0)
p.returncode = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as f:
    f.write(f"{time.monotonic() - t0:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_maxrss}\n")
sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)
' "$@"
}

# A free TCP port on 127.0.0.1.
bench_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# One count check: prints it, appends it to $WORK/checks.tsv; MISMATCH lines make
# bench_finish exit 1.
bench_check() { # point round tool ok|MISMATCH text
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$WORK/checks.tsv"
  if [ "$4" = ok ]; then
    echo "count check ok: $1 round $2 $3: $5" >&2
  else
    echo "MISMATCH: $1 round $2 $3: $5" >&2
  fi
}

# What rmatrix's per-second server counter reader added to Questions in one run directory:
# per phase one SHOW GLOBAL STATUS at its opening edge and one per second of
# server_seconds.csv (the last closes the phase), and its connection's Quit at the end.
bench_sampler_questions() { # rmatrix run directory
  [ -s "$1/server_seconds.csv" ] || { echo 0; return; }
  awk -F, 'NR > 1 {s[$8 "," $9] = 1; p[$8] = 1}
    END {n = 0; for (k in s) n++; m = 0; for (k in p) m++; print n + m + (m > 0)}' \
    "$1/server_seconds.csv"
}

# The tables. unit: what one operation is (query, request, transaction). BENCH_TARGETS
# overrides the three targets (throughput, client CPU/op, server CPU/op; default 0.98 0.80 1.02).
bench_report() { # peer-name unit
  python3 - "$WORK/runs.tsv" "$1" "$2" "$RMATRIX" ${BENCH_TARGETS:-0.98 0.80 1.02} <<'PY'
import json, statistics, subprocess, sys
path, peer, unit, rmatrix = sys.argv[1:5]
t_thr, t_cli, t_srv = (float(x) for x in sys.argv[5:8])
med = statistics.median
points, runs = [], {}
for line in open(path):
    if not line.strip():
        continue
    point, rnd, first, tool, rate, ops, cli, srv = line.rstrip("\n").split("\t")
    if point not in points:
        points.append(point)
    ops = float(ops)
    runs.setdefault((point, int(rnd)), {})[tool] = {
        "first": first, "rate": float(rate),
        "cli": 1e6 * float(cli) / ops, "srv": float(srv) / ops}

def f(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"

def pairs(point):
    out = []
    for (p, rnd), t in sorted(runs.items(), key=lambda kv: kv[0][1]):
        if p == point and "rmatrix" in t and peer in t:
            r, s = t["rmatrix"], t[peer]
            out.append((rnd, r["first"], r, s,
                        r["rate"] / s["rate"], r["cli"] / s["cli"], r["srv"] / s["srv"]))
    return out

cols = (f"rmatrix {unit}/s | {peer} {unit}/s | ratio | rmatrix client us/{unit} | "
        f"{peer} client us/{unit} | ratio | rmatrix server us/{unit} | {peer} server us/{unit} | ratio")
print("Every round (ratio = rmatrix / " + peer + "; client CPU = user+sys of the whole client "
      "process; server CPU = the server container's cgroup over that tool's run):\n")
print(f"| point | round | first | {cols} |")
print("|---|---:|---|" + "---:|" * 9)
for point in points:
    for rnd, first, r, s, tr, cr, sr in pairs(point):
        print(f"| {point} | {rnd} | {first} | {r['rate']:.0f} | {s['rate']:.0f} | {tr:.2f} | "
              f"{f(r['cli'])} | {f(s['cli'])} | {cr:.2f} | {f(r['srv'])} | {f(s['srv'])} | {sr:.2f} |")
nrounds = max((len(pairs(p)) for p in points), default=0)

def ratio(values):
    """`rmatrix ratio` on (rmatrix, peer) values per round: the median of the per-round
    ratios and the 95% interval of their geometric mean (low/high null under 2 rounds)."""
    text = "".join(f"{a!r} {b!r}\n" for a, b in values)
    out = subprocess.run([rmatrix, "ratio"], input=text, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)

def judged(values, target, higher_is_better):
    r = ratio(values)
    m, ci = r["median"], None if r["low"] is None else (r["low"], r["high"])
    meets = (lambda x: x >= target) if higher_is_better else (lambda x: x <= target)
    if meets(m):
        verdict = "ok"
    elif ci is None or not (meets(ci[1]) if higher_is_better else meets(ci[0])):
        verdict = "MISS"
    else:
        verdict = "noise"
    shown = f"{m:.2f}" if ci is None else f"{m:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
    return shown, verdict

print(f"\nMedians over {nrounds} round(s); each ratio is the MEDIAN OF THE PER-ROUND RATIOS, "
      f"[the 95% interval of their geometric mean] (targets: throughput >= {t_thr:.2f}, "
      f"client CPU/op <= {t_cli:.2f}, server CPU/op <= {t_srv:.2f}; ok = the median meets it, MISS = the "
      "whole interval misses it, noise = the median misses but the interval reaches it):\n")
print(f"| point | {cols} | targets thr / cli / srv |")
print("|---|" + "---:|" * 9 + "---|")
met = 0
for point in points:
    ps = pairs(point)
    if not ps:
        continue
    (tr, tv), (cr, cv), (sr, sv) = (judged([(p[2]["rate"], p[3]["rate"]) for p in ps], t_thr, True),
                                    judged([(p[2]["cli"], p[3]["cli"]) for p in ps], t_cli, False),
                                    judged([(p[2]["srv"], p[3]["srv"]) for p in ps], t_srv, False))
    met += (tv, cv, sv) == ("ok", "ok", "ok")
    print(f"| {point} | {med(p[2]['rate'] for p in ps):.0f} | {med(p[3]['rate'] for p in ps):.0f} | "
          f"{tr} | {f(med(p[2]['cli'] for p in ps))} | {f(med(p[3]['cli'] for p in ps))} | "
          f"{cr} | {f(med(p[2]['srv'] for p in ps))} | {f(med(p[3]['srv'] for p in ps))} | "
          f"{sr} | {tv} / {cv} / {sv} |")
print(f"\nAll three targets met at {met} of {len(points)} points.")

# The slot effect: the same server ratio split by which tool ran first in the round.
if nrounds >= 4:
    print(f"\nServer CPU ratio by order in the round (median of the rounds where rmatrix / "
          f"{peer} ran first):\n")
    print(f"| point | rmatrix first | {peer} first |")
    print("|---|---:|---:|")
    for point in points:
        ps = pairs(point)
        a = [p[6] for p in ps if p[1] == "rmatrix"]
        b = [p[6] for p in ps if p[1] != "rmatrix"]
        if a and b:
            print(f"| {point} | {med(a):.2f} | {med(b):.2f} |")
PY
}

# The count checks' verdict; exit 1 if any failed.
bench_finish() {
  local n bad
  n=$(wc -l <"$WORK/checks.tsv")
  bad=$(awk -F'\t' '$4 != "ok"' "$WORK/checks.tsv" | wc -l)
  echo
  if [ "$bad" -gt 0 ]; then
    echo "COUNT CHECKS: $bad of $n runs MISMATCH (the tool's own count differs from the server's):"
    awk -F'\t' '$4 != "ok" {print "  MISMATCH: " $1 " round " $2 " " $3 ": " $5}' "$WORK/checks.tsv"
    echo "raw outputs: $WORK" >&2
    exit 1
  fi
  echo "Count checks: all $n runs ok (each tool's count = the server's counters minus that tool's fixed overhead)."
  echo "raw outputs: $WORK" >&2
}

# Start the Redis 7.0 server both Redis scripts measure against: built from containers/redis,
# pinned to SERVER_CPU, host networking on a free port, a throwaway password, no persistence.
# Needs NAME, IMAGE, LABEL, SERVER_CPU and WORK; sets PORT, BENCH_REDIS_PASSWORD (exported,
# with REDISCLI_AUTH), CPU_KIND and CPU_FILE, and removes the container on exit.
bench_start_redis() {
  : >"$WORK/runs.tsv"
  : >"$WORK/checks.tsv"
  trap 'docker rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
  docker build -q --network host --build-arg suite=bookworm --build-arg package=redis-server \
    -t "$IMAGE" containers/redis >/dev/null
  PORT=$(bench_free_port)
  BENCH_REDIS_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  export BENCH_REDIS_PASSWORD
  export REDISCLI_AUTH=$BENCH_REDIS_PASSWORD
  printf 'save ""\nappendonly no\n' >"$WORK/redis.conf"
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  docker run -d --name "$NAME" --label "rmatrix.run=$LABEL" --network host \
    --cpuset-cpus "$SERVER_CPU" -e REDIS_PASSWORD="$BENCH_REDIS_PASSWORD" \
    -v "$WORK/redis.conf:/etc/rmatrix/redis.conf:ro" \
    "$IMAGE" --port "$PORT" --bind 127.0.0.1 >/dev/null
  for _ in $(seq 50); do
    redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.2
  done
  redis-cli -p "$PORT" ping | grep -q PONG
  # shellcheck disable=SC2034 # the caller reads them (bench_cpu_us)
  read -r CPU_KIND CPU_FILE < <(bench_cpu_file "$NAME")
}

# Start the MariaDB server the MySQL-protocol scripts measure against: image $1 (an
# rmatrix/mariadb-10.11 build), pinned to SERVER_CPU, host networking on PORT, a throwaway
# root password, innodb_flush_log_at_trx_commit=2 (writes measure CPU, not fsync).
# Needs NAME, LABEL, SERVER_CPU, PORT and WORK; sets BENCH_PW (exported), writes
# $WORK/client.cnf (0600: mariadb-slap reads the password there, rmatrix from BENCH_PW, none
# on a command line), sets CPU_KIND and CPU_FILE. The caller removes the container on exit.
# Further arguments go to mariadbd after these (a later option wins).
bench_start_mariadb() { # image [server option...]
  BENCH_PW=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  export BENCH_PW
  (umask 077; printf '[client]\nuser=root\npassword=%s\nhost=127.0.0.1\nport=%s\nskip-ssl\n' \
    "$BENCH_PW" "$PORT" >"$WORK/client.cnf")
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  docker run -d --name "$NAME" --label "rmatrix.run=$LABEL" --network host \
    --cpuset-cpus="$SERVER_CPU" -e MARIADB_ROOT_PASSWORD="$BENCH_PW" "$1" \
    --port="$PORT" --bind-address=127.0.0.1 --max-connections=1000 \
    --innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=2 "${@:2}" >/dev/null
  for _ in $(seq 120); do
    docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 1
  done
  docker exec "$NAME" mariadb -uroot -e 'SELECT 1' >/dev/null
  # shellcheck disable=SC2034 # the caller reads them (bench_cpu_us)
  read -r CPU_KIND CPU_FILE < <(bench_cpu_file "$NAME")
}

# Deterministic cost per operation, beside the timed rounds: each tool once under
# `strace -c -f` at COST_OPS and 2 x COST_OPS operations (system calls of every thread) and
# once under callgrind at COST_VG_OPS and 2 x COST_VG_OPS (user-space instructions, Ir, of
# every thread; --collect-systime=no). The figure per operation is the MARGINAL one, the
# difference between the two counts divided by the difference in operations: start-up,
# schema set-up and result writing cancel (what is left of them is printed as the fixed part
# at the smaller count). COST=0 turns it off. Records go to $WORK/cost.tsv:
#   point  tool  metric(syscalls|instructions)  ops1  ops2  value1  value2
# The caller's runner is called as `runner COUNT OUT` and must run its tool as
# `"${BENCH_WRAP[@]}" tool args...` for COUNT operations and print "ok DONE" on success, DONE
# being the operations the tool reports (redis-benchmark's pipelines may overshoot COUNT).
bench_cost_need() {
  [ "${COST:-1}" = 0 ] && return
  bench_need strace "apt-get install strace, or COST=0"
  bench_need valgrind "apt-get install valgrind, or COST=0"
}
# A runner's "rate count status" line -> "ok COUNT" when the run succeeded with at least the
# COUNT operations asked for.
bench_cost_ok() { # count
  awk -v n="$1" '{print ($3 == "ok" && $2 >= n) ? "ok " $2 : $3 "-count-" $2}'
}
bench_cost_syscalls() { # strace -c file: the calls column summed over the syscall rows
  awk '/^-----/ {n++; next} n == 1 && NF >= 5 {s += $4} END {print s + 0}' "$1"
}
bench_cost_instructions() { # callgrind out file: its summary (or totals) line's first event, Ir
  awk '$1 == "summary:" || $1 == "totals:" {print $2; exit}' "$1"
}
bench_cost() { # point tool runner
  [ "${COST:-1}" != 0 ] || return 0
  local n v out st got metric i ops vals dones
  for metric in syscalls instructions; do
    if [ "$metric" = syscalls ]; then n=$COST_OPS; else n=$COST_VG_OPS; fi
    vals=() dones=()
    for i in 1 2; do
      ops=$((n * i))
      out="$WORK/cost-$metric-$2-${1//[^A-Za-z0-9=_-]/_}-$ops"
      # shellcheck disable=SC2034 # the runner reads it
      if [ "$metric" = syscalls ]; then
        BENCH_WRAP=(taskset -c "$CLIENT_CPU" strace -c -f -o "$out.strace")
      else
        BENCH_WRAP=(taskset -c "$CLIENT_CPU" valgrind --tool=callgrind --collect-systime=no
                    --callgrind-out-file="$out.callgrind")
      fi
      read -r st got < <("$3" "$ops" "$out" | tail -1)
      [ "$st" = ok ] || { echo "$2 $metric run of $ops failed ($st): $out.*" >&2; exit 1; }
      dones+=("$got")
      if [ "$metric" = syscalls ]; then
        v=$(bench_cost_syscalls "$out.strace")
      else
        v=$(bench_cost_instructions "$out.callgrind")
      fi
      [ -n "$v" ] || { echo "no $metric count in $out.*" >&2; exit 1; }
      vals+=("$v")
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$metric" "${dones[0]}" "${dones[1]}" \
      "${vals[0]}" "${vals[1]}" >>"$WORK/cost.tsv"
    echo "cost: $1 $2 $metric ${vals[0]} at ${dones[0]}, ${vals[1]} at ${dones[1]}" >&2
  done
}

# The cost table from $WORK/cost.tsv (nothing when COST=0).
bench_cost_report() { # peer-name unit
  [ -s "$WORK/cost.tsv" ] || return 0
  python3 - "$WORK/cost.tsv" "$1" "$2" <<'PY'
import sys
path, peer, unit = sys.argv[1:4]
points, cost = [], {}
for line in open(path):
    point, tool, metric, n1, n2, v1, v2 = line.rstrip("\n").split("\t")
    if point not in points:
        points.append(point)
    n1, n2, v1, v2 = int(n1), int(n2), int(v1), int(v2)
    per = (v2 - v1) / (n2 - n1)
    cost[point, tool, metric] = (per, v1 - per * n1, n1, n2)

def f(x):
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"

def cells(point, metric):
    r, p = cost.get((point, "rmatrix", metric)), cost.get((point, peer, metric))
    if not r or not p:
        return "- | - | -", "- / -", ""
    ratio = f"{r[0] / p[0]:.2f}" if p[0] > 0 else "-"
    return (f"{f(r[0])} | {f(p[0])} | {ratio}", f"{f(r[1])} / {f(p[1])}", f"{r[2]}/{r[3]}")

print(f"\nDeterministic cost per {unit}, MARGINAL: (count at 2N - count at N) / (ops done at 2N - "
      f"ops done at N), one run of each "
      f"tool at each count (system calls: strace -c -f, every thread; instructions: callgrind "
      f"Ir, user space, every thread); fixed = what the count at N has beyond N x the marginal "
      f"(start-up, set-up, results):\n")
print(f"| point | rmatrix syscalls/{unit} | {peer} syscalls/{unit} | ratio | "
      f"rmatrix instructions/{unit} | {peer} instructions/{unit} | ratio | "
      f"fixed syscalls rmatrix / {peer} | fixed instructions rmatrix / {peer} | N strace, callgrind |")
print("|---|" + "---:|" * 9)
for point in points:
    s, sf, sn = cells(point, "syscalls")
    i, vf, vn = cells(point, "instructions")
    print(f"| {point} | {s} | {i} | {sf} | {vf} | {sn.split('/')[0]}, {vn.split('/')[0]} |")
PY
}
