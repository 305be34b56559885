#!/usr/bin/env bash
# A/A and A/B proof for `rmatrix compare`: does the nightly gate stay quiet when nothing
# changed, and does it catch a real change?
#
# Runs a small MariaDB matrix many times in the same server image, as a nightly job would:
#   - CALIBRATION runs of config A first (the noise store a nightly job has after a few nights);
#   - then N rounds of: a run of A, a run of B (the same cells with durable writes:
#     sync_binlog=1 and innodb_flush_log_at_trx_commit=1 instead of 0 and 2).
# Each round makes two compares, both with `--noise-from` the A runs before it:
#   A/A: the previous A run against this A run (identical configurations): any cell judged
#        improved or regressed is a false alarm. Target: at most 1 of N compares flags any cell.
#   A/B: this A run against this B run: the write cell must be judged regressed.
#        Target: at least N-1 of N.
# It prints every compare's verdicts and the two counts. N=20 (45 runs of ~30 s) took 30 min
# here on 2026-11-30, sharing the machine; the figures are in docs/compare.md.
#
# Usage: scripts/bench/bench-aa.sh [N, default 20] [CALIBRATION, default 5]
# Env: RMATRIX (default target/release/rmatrix), OUT (kept run directories, default a temp
#      dir), CONFIDENCE (default 95%), LOCK (a flock file serialising Docker users, optional).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-20}
CAL=${2:-5}
RMATRIX=${RMATRIX:-${CARGO_TARGET_DIR:-target}/release/rmatrix}
CONFIDENCE=${CONFIDENCE:-95%}
OUT=${OUT:-$(mktemp -d /tmp/bench-aa.XXXXXX)}
mkdir -p "$OUT/runs-a" "$OUT/runs-b"
[ -x "$RMATRIX" ] || { echo "no $RMATRIX: run cargo build --release (or scripts/setup.sh)" >&2; exit 2; }

# The two matrices differ only in the config's content; the config keeps one name, so the
# cells of an A run and a B run join.
matrix() { # durable(0|1) -> matrix text
  local sync=$1 flush=2
  [ "$1" = 1 ] && flush=1
  cat <<YAML
name: aa
description: A/A and A/B proof for compare (scripts/bench/bench-aa.sh)
servers:
  mariadb-10.11: {build: {dir: $(pwd)/containers/mariadb, args: {suite: bookworm}}}
configs:
  writes:
    mycnf: {log_bin: mysql-bin, server_id: 1, sync_binlog: $sync, innodb_flush_log_at_trx_commit: $flush}
engines: [InnoDB]
workloads:
  write: {slap: {load_type: write, number_int_cols: 2, number_char_cols: 2, primary_key: autoincrement}}
  key: {slap: {load_type: key, number_int_cols: 2, number_char_cols: 2, primary_key: autoincrement}}
concurrency: [2]
iterations: 3
warmup: 1s
length: 3s
report: {metric: qps, rows: [workload], columns: [engine]}
YAML
}
matrix 0 > "$OUT/a.yaml"
matrix 1 > "$OUT/b.yaml"

run() { # matrix out-dir
  local cmd=("$RMATRIX" run "$1" --out "$2" --quiet)
  if [ -n "${LOCK:-}" ]; then cmd=(flock "$LOCK" "${cmd[@]}"); fi
  "${cmd[@]}" || { echo "run $2 failed (exit $?)" >&2; exit 1; }
}

# Cells judged improved or regressed in a compare (JSON on stdin), e.g. "write:regressed".
flags() {
  python3 -c '
import json, sys
for c in json.load(sys.stdin):
    for ch in c["changes"]:
        if ch["verdict"] in ("improved", "regressed"):
            print("%s:%s:%+.1f%%" % (ch["dims"]["workload"], ch["verdict"], ch["change_pct"]))
'
}

judge() { # baseline candidate -> flags
  local out
  out=$("$RMATRIX" compare --confidence "$CONFIDENCE" --noise-from "$OUT/runs-a" --format json "$1" "$2") \
    || [ $? -eq 4 ] || { echo "compare $1 $2 failed" >&2; exit 1; }
  printf '%s' "$out" | flags | tr '\n' ' '
}

started=$(date +%s)
for i in $(seq 1 "$CAL"); do
  run "$OUT/a.yaml" "$OUT/runs-a/a-00-$i"
done
prev="$OUT/runs-a/a-00-$CAL"
aa_flagged=0
ab_caught=0
printf '%-6s %-40s %s\n' round "A/A flags (want none)" "A/B flags (want write:regressed)"
for i in $(seq 1 "$N"); do
  a="$OUT/runs-a/a-$(printf %02d "$i")"
  b="$OUT/runs-b/b-$(printf %02d "$i")"
  run "$OUT/a.yaml" "$a"
  run "$OUT/b.yaml" "$b"
  aa=$(judge "$prev" "$a")
  ab=$(judge "$a" "$b")
  [ -n "$aa" ] && aa_flagged=$((aa_flagged + 1))
  case " $ab" in *" write:regressed"*) ab_caught=$((ab_caught + 1)) ;; esac
  printf '%-6s %-40s %s\n' "$i" "${aa:--}" "${ab:--}"
  prev=$a
done
elapsed=$(( $(date +%s) - started ))
echo
echo "confidence $CONFIDENCE, noise from the A runs before each compare ($CAL calibration runs first)"
echo "A/A: $aa_flagged of $N compares of identical configurations flagged a cell (target <= 1)"
echo "A/B: $ab_caught of $N compares of durable vs fast writes flagged the write cell regressed (target >= $((N - 1)))"
echo "elapsed: $((elapsed / 60)) min $((elapsed % 60)) s; runs kept in $OUT"
