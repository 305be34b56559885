#!/usr/bin/env bash
# Out-of-sample error of `rmatrix plan`'s time estimate: for each matrix, the estimate is
# taken before the run (from the runs stored before it), then the matrix is run and its wall
# time compared. Each run is stored in reports/runs (where the next plan learns from), so the
# matrices are measured in the order given.
#
#   scripts/bench/estimate-error.sh "MATRIX [ARGS...]" ...
#   e.g. scripts/bench/estimate-error.sh matrices/quick.yaml \
#          "matrices/redis.yaml --only server=redis-7.0"
#   RMATRIX=path (default target/release/rmatrix); LEARN="--learn-from DIR ..." (default: plan's)
#
# Prints one line per matrix: estimate, actual, error (estimate/actual - 1), and the plan's
# lines on where the estimate came from. scripts/bench/estimate-replay.py does the same over
# runs already stored, without running anything.
set -euo pipefail
cd "$(dirname "$0")/../.."
rmatrix=${RMATRIX:-target/release/rmatrix}
[ -x "$rmatrix" ] || { echo "no $rmatrix: run scripts/setup-main.sh" >&2; exit 2; }
read -r -a learn <<<"${LEARN:-}"

printf '%-50s %10s %10s %8s\n' "matrix" "estimate" "actual" "error"
for spec in "$@"; do
  read -r -a words <<<"$spec"
  est=$("$rmatrix" plan "${words[@]}" "${learn[@]}" --format json |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["estimate"]["seconds"]))')
  "$rmatrix" plan "${words[@]}" "${learn[@]}" | grep '^estimate' | sed 's/^/  /' >&2
  start=$(date +%s.%N)
  "$rmatrix" run "${words[@]}" --quiet >/dev/null
  end=$(date +%s.%N)
  python3 - "$spec" "$est" "$start" "$end" <<'EOF'
import sys
spec, est, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
actual = end - start
print(f"{spec[:50]:<50} {est:>9.0f}s {actual:>9.0f}s {est / actual - 1:>+8.1%}")
EOF
done
