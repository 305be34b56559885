#!/usr/bin/env bash
# A year of nightly runs: the results store against run folders. 365 copies of one real run
# (each with its own run id, instance token and start, one day apart; its rows as measured)
# go into a folder, a SQLite store and a PostgreSQL store (the tests' server,
# scripts/store-postgres.sh). Then `history` and `compare --noise-from` read them from each:
# the median wall time of ROUNDS, and the folder's over the store's.
#
# Usage: scripts/bench/store-365.sh RUN_DIR [ROUNDS] [COPIES]
#   RUN_DIR  a real run, e.g. of matrices/nightly.yaml (`rmatrix run matrices/nightly.yaml`)
#   RMATRIX  the binary (default: target/release/rmatrix)
#   COLD     1 (as root): also once each with the page cache dropped first (a year of folders
#            is rarely all in memory)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUN=${1:?usage: $0 RUN_DIR [ROUNDS] [COPIES]}
ROUNDS=${2:-5}
COPIES=${3:-365}
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$ROOT/scripts/store-postgres.sh" start
admin=$("$ROOT/scripts/store-postgres.sh" url)
pg=${admin%/postgres}/rmatrix_store_bench
psql -q "$admin" -c "DROP DATABASE IF EXISTS rmatrix_store_bench WITH (FORCE)" \
    -c "CREATE DATABASE rmatrix_store_bench"

# The copies: the run directory as it is, but for the manifest's identity and times.
python3 - "$RUN" "$work/runs" "$COPIES" <<'PY'
import datetime, json, os, shutil, sys
src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
man = json.load(open(os.path.join(src, "manifest.json")))
start = datetime.datetime(2026, 1, 1, 3, 0, 0, tzinfo=datetime.timezone.utc)
skip = shutil.ignore_patterns("charts", "report.html", "profiles", "sock")
for day in range(copies):
    t = start + datetime.timedelta(days=day)
    run_id = t.strftime("%Y%m%d-030000-nightly")
    d = os.path.join(dst, run_id)
    shutil.copytree(src, d, ignore=skip)
    m = dict(man)
    m["run_id"] = run_id
    m["instance"] = "%08x" % (0x10000000 + day)
    m["started_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    m["finished_at"] = (t + datetime.timedelta(minutes=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    json.dump(m, open(os.path.join(d, "manifest.json"), "w"), indent=2)
PY
runs=("$work"/runs/*)
base=${runs[-2]}
cand=${runs[-1]}
matrix=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['matrix_file'])" "$RUN/manifest.json" 2>/dev/null || true)

seconds() { # command...: wall seconds, output discarded; a failed command stops the script
  local t0 t1 code=0
  t0=$(date +%s%N)
  "$@" >/dev/null 2>"$work/stderr" || code=$?
  t1=$(date +%s%N)
  # compare exits 4 on a regression: an answer, not a failure.
  if [ "$code" -ne 0 ] && [ "$code" -ne 4 ]; then
    echo "failed (exit $code): $*" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
  echo "scale=3; ($t1 - $t0) / 1000000000" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
timed() { # label command...
  local label=$1
  shift
  local i out=()
  for ((i = 0; i < ROUNDS; i++)); do out+=("$(seconds "$@")"); done
  printf '%s\n' "${out[@]}" | median
}

echo "# results store vs run folders: $COPIES copies of $(basename "$RUN") ($matrix), median of $ROUNDS"
echo
printf '| step | folder (s) | SQLite (s) | PostgreSQL (s) |\n|---|---:|---:|---:|\n'
imp_sqlite=$(seconds "$RMATRIX" store import --store "$work/runs.db" "$work/runs")
imp_pg=$(seconds "$RMATRIX" store import --store "$pg" "$work/runs")
printf '| store import (once) | - | %s | %s |\n' "$imp_sqlite" "$imp_pg"
for what in history compare; do
  case $what in
    history)
      f=$(timed f "$RMATRIX" history "$work/runs")
      s=$(timed s "$RMATRIX" history "$work/runs.db")
      p=$(timed p "$RMATRIX" history "$pg") ;;
    compare)
      f=$(timed f "$RMATRIX" compare "$base" "$cand" --noise-from "$work/runs")
      s=$(timed s "$RMATRIX" compare "$base" "$cand" --noise-from "$work/runs.db")
      p=$(timed p "$RMATRIX" compare "$base" "$cand" --noise-from "$pg") ;;
  esac
  printf '| %s | %s | %s | %s |\n' "$what" "$f" "$s" "$p"
done
if [ "${COLD:-0}" = 1 ]; then
  cold() { sync && echo 3 >/proc/sys/vm/drop_caches && seconds "$@"; }
  printf '| history, cold cache | %s | %s | %s |\n' "$(cold "$RMATRIX" history "$work/runs")" \
    "$(cold "$RMATRIX" history "$work/runs.db")" "$(cold "$RMATRIX" history "$pg")"
  printf '| compare, cold cache | %s | %s | %s |\n' \
    "$(cold "$RMATRIX" compare "$base" "$cand" --noise-from "$work/runs")" \
    "$(cold "$RMATRIX" compare "$base" "$cand" --noise-from "$work/runs.db")" \
    "$(cold "$RMATRIX" compare "$base" "$cand" --noise-from "$pg")"
fi
echo
echo "Same answers: history's CSV from the folder and from each store"
for src in "$work/runs.db" "$pg"; do
  "$RMATRIX" history "$work/runs" --format csv >"$work/a.csv" 2>/dev/null
  "$RMATRIX" history "$src" --format csv >"$work/b.csv" 2>/dev/null
  if [ -s "$work/a.csv" ] && cmp -s "$work/a.csv" "$work/b.csv"; then
    echo "- ${src##*/}: identical ($(wc -l <"$work/a.csv") lines)"
  else
    echo "- ${src##*/}: DIFFERENT"
  fi
done
ls -l "$work/runs.db" | awk '{print "SQLite file: " $5 " bytes"}'
du -sb "$work/runs" | awk '{print "folder: " $1 " bytes"}'
psql -q "$admin" -c "DROP DATABASE IF EXISTS rmatrix_store_bench WITH (FORCE)"
