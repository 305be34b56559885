#!/usr/bin/env bash
# Flakiness check: runs the integration suite (or the tests a filter names) N times, each pass
# once on a quiet machine and once beside a CPU hog (a busy loop per core), and reports every
# test that failed in any pass, how often and in which mode, then the slowest tests and modules.
#
#   scripts/flaky.sh N [FILTER...]     e.g. scripts/flaky.sh 3, scripts/flaky.sh 20 faults_server::
#                                      (a test runs when its name contains any FILTER)
#   HOG=off|on|both (default both)     which modes each pass runs
#   OUT=DIR (default target/flaky)     where each pass's output is kept
#
# A test's time is the time between its result line and the one before: the suite runs one
# test at a time (--test-threads=1), as CI does. Exit 1 when any test failed in any pass.
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:?usage: scripts/flaky.sh N [FILTER...]}
shift
filters=("$@")
modes=${HOG:-both}
out=${OUT:-target/flaky}
case "$modes" in
  both) modes="off on" ;;
  off | on) ;;
  *) echo "flaky: HOG is off, on or both, not '$modes'" >&2; exit 2 ;;
esac
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "flaky: N is a count of passes, not '$n'" >&2; exit 2; }

mkdir -p "$out"
rm -f "$out"/*.log "$out"/times.tsv
# Built once: every pass runs the same test binary, whatever is edited meanwhile.
built=$(cargo test --release --test it --no-run 2>&1) || { echo "$built" >&2; exit 1; }
bin=$(sed -n 's/.*Executable tests\/it\/main.rs (\(.*\))$/\1/p' <<<"$built")
[ -x "$bin" ] || { echo "flaky: no integration test binary in: $built" >&2; exit 1; }

hogs=()
stop_hog() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  hogs=()
}
trap stop_hog EXIT
start_hog() {
  for _ in $(seq "$(nproc)"); do
    yes >/dev/null &
    hogs+=($!)
  done
}

# One pass: each result line's arrival time, as `mode pass test result seconds` rows.
run_pass() {
  local mode=$1 pass=$2 log="$out/pass-$2-hog-$1.log" rc
  [ "$mode" = on ] && start_hog
  set +e
  "$bin" --test-threads=1 "${filters[@]}" 2>&1 |
    while IFS= read -r line; do
      printf '%s\n' "$line" >>"$log"
      if [[ "$line" =~ ^test\ ([^ ]+)\ \.\.\.\ (ok|FAILED|ignored)$ ]]; then
        printf '%s\t%s\t%s\t%s\t%s\n' "$mode" "$pass" "${BASH_REMATCH[1]}" \
          "${BASH_REMATCH[2]}" "$(date +%s.%N)"
      fi
    done | awk -F'\t' -v t0="$(date +%s.%N)" 'BEGIN {OFS="\t"} {d=$5-t0; t0=$5; $5=sprintf("%.1f", d); print}' >>"$out/times.tsv"
  rc=${PIPESTATUS[0]}
  set -e
  stop_hog
  echo "flaky: pass $pass, hog $mode: exit $rc; $(awk -F'\t' -v p="$pass" -v m="$mode" \
    '$1==m && $2==p {n[$4]++} END {printf "%d ok, %d failed", n["ok"], n["FAILED"]}' "$out/times.tsv")" >&2
}

for pass in $(seq "$n"); do
  for mode in $modes; do
    run_pass "$mode" "$pass"
  done
done

echo "## failures per test (of $n passes per mode)"
failed=$(awk -F'\t' '$4=="FAILED" {f[$3" hog="$1]++} END {for (k in f) print f[k]"\t"k}' "$out/times.tsv" | sort -rn)
if [ -n "$failed" ]; then echo "$failed"; else echo "none"; fi
# Times from the quiet passes (the hog's when only those ran): each test's median.
quiet=$([ "$modes" = on ] && echo on || echo off)
echo "## slowest ten tests (median seconds over the hog=$quiet passes)"
awk -F'\t' -v m="$quiet" '$1==m {print $3"\t"$5}' "$out/times.tsv" | sort -t$'\t' -k1,1 -k2,2n |
  awk -F'\t' '{v[$1]=v[$1]" "$2} END {for (k in v) {n=split(v[k],a," "); printf "%s\t%s\n", a[int((n+1)/2)], k}}' |
  sort -rn | head -10
echo "## modules (seconds, pass 1, hog=$quiet)"
awk -F'\t' -v m="$quiet" '$1==m && $2==1 {split($3,p,"::"); s[p[1]]+=$5} END {for (k in s) printf "%.0f\t%s\n", s[k], k}' \
  "$out/times.tsv" | sort -rn
[ -z "$failed" ]
