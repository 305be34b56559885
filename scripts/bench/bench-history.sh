#!/usr/bin/env bash
# What the server counters cost the readers of a run: a year of nightly runs (RUNS copies of a
# stored run, default reports/examples/binlog-2026-11-29, by scripts/bench/synth-nightly.py) in
# format 1 (counters in results.csv) and in format 2 (counters in counters.csv), then, for each
# layout, the bytes of one run's files, and the wall time and max RSS (/usr/bin/time -v) of
# `rmatrix history` over all the runs and of `rmatrix report` of one run and of
# `report --format json` (which reads the counters).
#
#   scripts/bench/bench-history.sh [SRC]      # RUNS=365, RMATRIX=target/release/rmatrix
#   RMATRIX=/path/to/older/rmatrix LAYOUTS=old scripts/bench/bench-history.sh   # before format 2
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${1:-reports/examples/binlog-2026-11-29}
RUNS=${RUNS:-365}
BIN=${RMATRIX:-target/release/rmatrix}
[[ -x $BIN ]] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() { # label, command...
  local label=$1
  shift
  /usr/bin/time -v "$@" >/dev/null 2>"$work/time" || {
    cat "$work/time"
    return 1
  }
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
  printf '  %-28s %10s wall  %8d MB max RSS\n' "$label" "$wall" $((rss / 1024))
}

for layout in ${LAYOUTS:-old new}; do
  store=$work/$layout
  scripts/bench/synth-nightly.py "$SRC" "$store" --layout "$layout" --runs "$RUNS"
  one=$(find "$store" -mindepth 1 -maxdepth 1 -type d | sort | head -1)
  echo "layout $layout ($RUNS runs from $SRC):"
  for f in results.csv counters.csv; do
    if [[ -f $one/$f ]]; then
      printf '  %-28s %10d bytes\n' "$f of one run" "$(stat -c %s "$one/$f")"
    fi
  done
  measure "history ($RUNS runs)" "$BIN" history "$store"
  measure "history (30 runs)" "$BIN" history $(find "$store" -mindepth 1 -maxdepth 1 -type d | sort | head -30)
  measure "report (one run)" "$BIN" report "$one"
  measure "report --format json (one)" "$BIN" report "$one" --format json
done
