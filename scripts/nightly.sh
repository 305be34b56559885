#!/usr/bin/env bash
# Nightly benchmark: run, compare with the last good run, publish Markdown, fail on a
# regression. See docs/nightly.md.
set -uo pipefail
STORE=${STORE:-/var/lib/rmatrix/nightly}       # every run, appended; survives between jobs
MATRIX=${MATRIX:-matrices/nightly.yaml}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/stdout}    # where the Markdown goes
mkdir -p "$STORE/runs"
RUN="$STORE/runs/$(date -u +%Y%m%d-%H%M%S)"

rmatrix run "$MATRIX" --out "$RUN" --quiet
status=$?
cat "$RUN/summary.md" >> "$SUMMARY"
if [ "$status" -ne 0 ]; then
    echo "rmatrix run failed (exit $status); the baseline is kept" >&2
    exit "$status"                             # 1 cells failed, 2 bad matrix, 3 no Docker
fi

if [ -e "$STORE/last-good" ]; then
    rmatrix compare "$STORE/last-good" "$RUN" >> "$SUMMARY"
    status=$?
else
    echo "First run: it becomes the baseline." >> "$SUMMARY"
    status=0
fi

# The series of every cell over the last nights, with change points.
rmatrix history "$STORE/runs" >> "$SUMMARY" || true

case $status in
    0) ln -sfn "$RUN" "$STORE/last-good" ;;    # promote: this run is the new baseline
    4) echo "performance regression against $(readlink "$STORE/last-good")" >&2 ;;
    *) echo "compare could not use the runs (exit $status)" >&2 ;;
esac
exit $status
