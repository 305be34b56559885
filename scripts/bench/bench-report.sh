#!/usr/bin/env bash
# Rendering cost: a synthetic run of 200 cells (5 servers x 4 configs x 10 concurrency
# levels, 3 iterations each, 60 per-second samples and 10 warm-up seconds per iteration) is
# written to a temporary folder, then `rmatrix report --write` draws its charts, summary.md and
# report.html, and `rmatrix report --format html` renders the page alone. Prints the wall time
# of each (best of ROUNDS) against the 2 s target. The numbers in the rows are made up: this
# measures the renderer, not a server.
#
#   scripts/bench/bench-report.sh            # ROUNDS=3 by default
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
BIN=${RMATRIX:-target/release/rmatrix}
[[ -x $BIN ]] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$work/run
mkdir -p "$run"

servers=(s1 s2 s3 s4 s5)
configs=(c1 c2 c3 c4)
levels=(1 2 4 8 16 32 64 128 256 512)
{
  echo "name: bench-report"
  echo "description: A synthetic run for scripts/bench/bench-report.sh."
  echo "servers:"
  for s in "${servers[@]}"; do echo "  $s: {image: 'mariadb:11.8'}"; done
  echo "configs:"
  for c in "${configs[@]}"; do echo "  $c: {mycnf: {max_connections: 600}}"; done
  echo "workloads:"
  echo "  rw: {oltp: {test: oltp_read_write, tables: 4, table_size: 10000}}"
  echo "concurrency: [$(IFS=,; echo "${levels[*]}")]"
  echo "iterations: 3"
  echo "warmup: 10s"
  echo "length: 60s"
  echo "report: {metric: qps, rows: [concurrency], columns: [server, config]}"
} >"$run/matrix.yaml"
cat >"$run/manifest.json" <<'EOF'
{"format_version": 1, "rmatrix_version": "bench", "run_id": "bench-report", "instance": "bench",
 "matrix_file": "matrix.yaml", "started_at": "2026-11-30T00:00:00Z", "cells_planned": 200}
EOF

# results.csv, samples.csv and warmup.csv in the columns rmatrix writes.
awk -v servers="${servers[*]}" -v configs="${configs[*]}" -v levels="${levels[*]}" -v dir="$run" '
BEGIN {
  split(servers, S, " "); split(configs, C, " "); split(levels, L, " ");
  res = dir "/results.csv"; smp = dir "/samples.csv"; wrm = dir "/warmup.csv";
  print "server,config,engine,workload,kind,concurrency,iteration,status,error,queries,seconds,qps,tps,lat_avg_ms,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_max_ms" > res;
  h = "server,config,engine,workload,concurrency,iteration,second,threads,tps,qps,reads_ps,writes_ps,others_ps,lat_p95_ms,errors_ps,reconnects_ps,lat_p99_ms";
  print h > smp; print h > wrm;
  srand(42);
  for (s in S) for (c in C) for (l in L) for (i = 1; i <= 3; i++) {
    base = 1000 * s + 100 * c + 50 * log(L[l] + 1);
    q = base * (1 + (rand() - 0.5) / 20);
    printf "%s,%s,,rw,oltp,%d,%d,ok,,%d,60.0,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f\n", S[s], C[c], L[l], i, q * 60, q, q / 20, L[l] / q * 1000, L[l] / q * 900, L[l] / q * 1500, L[l] / q * 2000, L[l] / q * 5000 > res;
    for (t = 1; t <= 60; t++) {
      v = q * (1 + (rand() - 0.5) / 10);
      printf "%s,%s,,rw,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,0.0,0.0,%.3f\n", S[s], C[c], L[l], i, t, L[l], v / 20, v, v * 0.7, v * 0.2, v * 0.1, L[l] / v * 1500, L[l] / v * 2000 > smp;
    }
    for (t = 1; t <= 10; t++) {
      v = q * t / 10;
      printf "%s,%s,,rw,%d,%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,0.0,0.0,%.3f\n", S[s], C[c], L[l], i, t, L[l], v / 20, v, v * 0.7, v * 0.2, v * 0.1, L[l] / (v + 1) * 1500, L[l] / (v + 1) * 2000 > wrm;
    }
  }
}'
cells=$(($(wc -l <"$run/results.csv") - 1))
echo "synthetic run: $cells rows ($((cells / 3)) cells x 3 iterations), $(($(wc -l <"$run/samples.csv") - 1)) samples"

best() { # best wall time in seconds of ROUNDS runs of "$@"
  local b=""
  for _ in $(seq "$ROUNDS"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; echo "failed: $*"; exit 1; }
    t1=$(date +%s.%N)
    b=$(awk -v a="$b" -v d="$(awk -v x="$t0" -v y="$t1" 'BEGIN{print y-x}')" 'BEGIN{print (a=="" || d<a) ? d : a}')
  done
  echo "$b"
}
write=$(best "$BIN" report "$run" --write)
html=$(best "$BIN" report "$run" --format html)
echo "charts drawn: $(ls "$run/charts" | wc -l), report.html: $(($(wc -c <"$run/report.html") / 1024)) KiB"
printf '%-48s %8s s  (target < 2 s)\n' "report --write (charts, summary.md, report.html)" "$write"
printf '%-48s %8s s  (target < 2 s)\n' "report --format html" "$html"
