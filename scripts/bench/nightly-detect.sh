#!/usr/bin/env bash
# How often the nightly recipe (scripts/nightly.sh with REV, the side-by-side design) fails on
# a night that brings a small planted slowdown: Debian's Redis source as a repository
# (scripts/redis-source-repo.sh) with `slow GET` spinning SPIN_US microseconds per GET. One
# first night (REV = the first commit, an A/A that records it as the last good revision) fills
# a store; each try copies that store and runs a good night (REV = the commit before `slow
# GET`, whose GET and SET code is the first commit's) when GOOD_NIGHT=1, then the slow night
# (REV = `slow GET`). A try tells when the slow night exits 4 and the last good revision is
# not `slow GET`. Prints one row per try and the count.
#
# Usage: scripts/bench/nightly-detect.sh
# Env: RMATRIX (default target/release/rmatrix), OUT (default /tmp/rmatrix-nightly-detect;
#      deleted first), SPIN_US (1), TRIES (10), GOOD_NIGHT (0), AB_ARGS (default
#      "--rounds 10 --max-rounds 30 --budget 6m"), COMPARE_ARGS (default "--threshold 5%"),
#      LENGTH (3s), LOCK (flock file serialising Docker users, default /tmp/docker-tests.lock).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/scripts/bench/redis-source-lib.sh"
RMATRIX=${RMATRIX:-$ROOT/target/release/rmatrix}
OUT=${OUT:-/tmp/rmatrix-nightly-detect}
SPIN_US=${SPIN_US:-1} TRIES=${TRIES:-10} GOOD_NIGHT=${GOOD_NIGHT:-0} LENGTH=${LENGTH:-3s}
AB_ARGS=${AB_ARGS:---rounds 10 --max-rounds 30 --budget 6m}
COMPARE_ARGS=${COMPARE_ARGS:---threshold 5%}
LOCK=${LOCK:-/tmp/docker-tests.lock}
rm -rf "$OUT" && mkdir -p "$OUT"
"$ROOT/scripts/redis-source-repo.sh" "$OUT/redis" "$SPIN_US" > "$OUT/commits"
first=$(head -1 "$OUT/commits" | cut -d' ' -f1)
slow=$(grep ' slow GET$' "$OUT/commits" | cut -d' ' -f1)
before=$(grep -B1 ' slow GET$' "$OUT/commits" | head -1 | cut -d' ' -f1)
redis_source_matrix nightly-detect "$OUT/redis" "$LENGTH" get set > "$OUT/m.yaml"
# One night: its exit code; its summary, stdout and stderr go to files named after it.
night() {
  local store=$1 rev=$2 name=$3 code
  set +e
  STORE=$store REV=$rev SETUP=0 MATRIX=$OUT/m.yaml RMATRIX=$RMATRIX AB_ARGS=$AB_ARGS \
    COMPARE_ARGS=$COMPARE_ARGS GITHUB_STEP_SUMMARY=$OUT/$name.md \
    flock "$LOCK" "$ROOT/scripts/nightly.sh" > "$OUT/$name.out" 2> "$OUT/$name.err"
  code=$?
  set -e
  echo "$code"
}
code=$(night "$OUT/store-0" "$first" first-night)
if [ "$code" != 0 ] || [ "$(cat "$OUT/store-0/last-good-rev")" != "$first" ]; then
  echo "the first night did not record $first (exit $code): $OUT/first-night.err" >&2
  exit 1
fi
echo "| try | good night exit | slow night exit | seconds | last good revision after | told |"
echo "|---:|---:|---:|---:|---|---|"
told=0
for i in $(seq 1 "$TRIES"); do
  start=$(date +%s)
  cp -a "$OUT/store-0" "$OUT/store-$i"
  good_code=-
  [ "$GOOD_NIGHT" = 1 ] && good_code=$(night "$OUT/store-$i" "$before" "try-$i-good")
  code=$(night "$OUT/store-$i" "$slow" "try-$i-slow")
  secs=$(( $(date +%s) - start ))
  kept=$(cat "$OUT/store-$i/last-good-rev")
  case $kept in
    "$first") kept_name="first commit" ;;
    "$before") kept_name="the commit before slow GET" ;;
    "$slow") kept_name="slow GET" ;;
    *) kept_name=$kept ;;
  esac
  ok=no
  if [[ $code == 4 && $kept != "$slow" ]]; then
    ok=yes
    told=$((told + 1))
  fi
  echo "| $i | $good_code | $code | $secs | $kept_name | $ok |"
done
echo
echo "the slow night failed (exit 4, not promoted): $told of $TRIES (SPIN_US=$SPIN_US, good night $GOOD_NIGHT, AB_ARGS $AB_ARGS, COMPARE_ARGS $COMPARE_ARGS, length $LENGTH)"
