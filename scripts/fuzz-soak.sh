#!/usr/bin/env bash
# Soak the matrix fuzz target (fuzz/fuzz_targets/matrix.rs: parse + validate + expand +
# render) with libFuzzer for a while, default 10 minutes. Prints executions, coverage and
# the verdict; exit 0 only with no crash (panic), no hang (-timeout) and no memory blow-up.
# Not part of CI. Usage: scripts/fuzz-soak.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# cargo-fuzz needs nightly flags; the stable toolchain takes them with RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1
work="${FUZZ_WORK:-target/fuzz-soak}"
mkdir -p "$work/corpus" "$work/artifacts"
# Seeds: every shipped matrix and every malformed input the tests pin.
cp matrices/*.yaml "$work/corpus/" 2>/dev/null || true
cp tests/bad/*.yaml "$work/corpus/" 2>/dev/null || true
cd fuzz
cargo fuzz build --release --sanitizer none matrix
set +e
cargo fuzz run --release --sanitizer none matrix "../$work/corpus" -- \
  -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="../$work/artifacts/" -print_final_stats=1 2>"../$work/log"
status=$?
set -e
cd ..
grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$work/log" | tail -4
artifacts=$(find "$work/artifacts" -type f | wc -l)
echo "fuzz-soak: ${secs}s, exit $status, $artifacts crash/hang artifacts in $work/artifacts (log: $work/log)"
[ "$status" -eq 0 ] && [ "$artifacts" -eq 0 ]
