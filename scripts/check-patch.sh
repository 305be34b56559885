#!/usr/bin/env bash
# The vendored crates (vendor/*/RMATRIX-PATCH.md) must really be the ones built: fail when
# Cargo reports a [patch.crates-io] entry unused (an upstream version bump would silently drop
# the fix) or the crate graph takes the crate from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
for crate in mysql_common mysql; do
  out=$(cargo tree --locked -i "$crate" -e normal 2>&1) || { echo "$out"; exit 1; }
  if grep -qi "was not used" <<<"$out"; then
    echo "check-patch: Cargo reports the $crate patch unused:" >&2
    grep -i "patch" <<<"$out" >&2
    exit 1
  fi
  if ! head -1 <<<"$out" | grep -q "vendor/$crate)"; then
    echo "check-patch: $crate does not come from vendor/$crate:" >&2
    head -3 <<<"$out" >&2
    exit 1
  fi
  echo "check-patch: $crate comes from vendor/$crate ($(head -1 <<<"$out"))"
done
