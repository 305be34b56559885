#!/usr/bin/env bash
# Soak every fuzz target with libFuzzer for a total time (default 15 minutes), split evenly:
#   matrix         a matrix file: parse + validate + expand + render (fuzz_targets/matrix.rs)
#   results_csv    a run's results.csv, then every report format of the run
#   samples_csv    a run's samples.csv, the same
#   manifest_json  a run's manifest.json, the same
#   run_dir        all three at once (the input split at NUL bytes)
#   store_sqlite   a results store (a SQLite file) read as store list, history and
#                  plan --learn-from read one (seeded with stores rmatrix made: RMATRIX, or
#                  target/release/rmatrix, built when missing)
#   server_seconds_csv  a run's server_seconds.csv, the same (its timeline charts too)
#   profile_folded a run's stored profile (folded stacks), the same (its flame graph too)
#   ratio          `rmatrix ratio`'s standard input: refused, or one line of JSON
# Every run target renders all six formats: OpenMetrics is then parsed line by line, BMF as JSON.
# Prints each target's executions, coverage and verdict; exit 0 only with no crash (panic),
# no hang (-timeout) and no memory blow-up in any. Not part of CI.
# Usage: scripts/fuzz-soak.sh [TOTAL_SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
total="${1:-900}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(matrix results_csv samples_csv manifest_json run_dir
  store_sqlite server_seconds_csv profile_folded ratio)
per=$((total / ${#targets[@]}))
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# cargo-fuzz needs nightly flags; the stable toolchain takes them with RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1
work="${FUZZ_WORK:-target/fuzz-soak}"

# Seeds: what the tests and the stored examples hold, per target (a seed over -max_len is
# cut by libFuzzer).
seed() { # target
  local c="$work/$1/corpus" i=0
  mkdir -p "$c" "$work/$1/artifacts"
  case $1 in
    matrix)
      cp matrices/*.yaml "$c/" 2>/dev/null || true
      cp tests/bad/*.yaml "$c/" 2>/dev/null || true
      ;;
    results_csv | samples_csv | manifest_json | server_seconds_csv)
      local name=${1%_*}.${1##*_}
      for f in reports/examples/*/"$name" tests/bad/rundirs/*/"$name" tests/fixtures/*/*/"$name"; do
        if [ -f "$f" ]; then cp "$f" "$c/seed-$((i += 1))"; fi
      done
      ;;
    profile_folded)
      for f in reports/examples/*/profiles/*.folded tests/fixtures/*/*/profiles/*.folded; do
        if [ -f "$f" ]; then head -c 60000 "$f" >"$c/seed-$((i += 1))"; fi
      done
      printf 'mariadbd;do_command;write_row 10\nmariadbd;do_command;fsync 30\n' >"$c/seed-0"
      ;;
    ratio)
      printf '100 101\n98 99.5\n102 100\n' >"$c/seed-1"
      printf '1e300 1e-300\n0.5 2\n' >"$c/seed-2"
      ;;
    run_dir)
      for d in reports/examples/*/ tests/bad/rundirs/*/; do
        { cat "$d/results.csv"; printf '\0'; head -c 20000 "$d/samples.csv" 2>/dev/null || true
          printf '\0'; cat "$d/manifest.json"; } >"$c/seed-$((i += 1))"
      done
      ;;
    store_sqlite)
      local bin=${RMATRIX:-target/release/rmatrix}
      [ -x "$bin" ] || cargo build --release --quiet
      for d in tests/fixtures/compare/base tests/fixtures/compare/slower tests/bad/rundirs/good; do
        local f="$c/seed-$((i += 1))"
        rm -f "$f"
        "$bin" store import --store "$f" "$d" >/dev/null 2>&1 || true
      done
      ;;
  esac
}

cd fuzz
cargo fuzz build --release --sanitizer none
cd ..
failed=0
for t in "${targets[@]}"; do
  seed "$t"
  # A store is pages of 4 KiB: its seeds are 64 KiB and more.
  max_len=65536
  if [ "$t" = store_sqlite ]; then max_len=262144; fi
  set +e
  (cd fuzz && cargo fuzz run --release --sanitizer none "$t" "../$work/$t/corpus" -- \
    -max_total_time="$per" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1024 -max_len="$max_len" \
    -artifact_prefix="../$work/$t/artifacts/" -print_final_stats=1 2>"../$work/$t/log")
  status=$?
  set -e
  execs=$(grep -E "stat::number_of_executed_units" "$work/$t/log" | tail -1 | awk '{print $2}')
  cov=$(grep -oE "cov: [0-9]+" "$work/$t/log" | tail -1)
  artifacts=$(find "$work/$t/artifacts" -type f | wc -l)
  echo "fuzz-soak $t: ${per}s, ${execs:-?} executions, ${cov:-cov: ?}, exit $status, $artifacts crash/hang artifacts in $work/$t/artifacts (log: $work/$t/log)"
  if [ "$status" -ne 0 ] || [ "$artifacts" -ne 0 ]; then failed=1; fi
done
[ "$failed" -eq 0 ]
