#!/usr/bin/env bash
# The vendored mysql_common (vendor/mysql_common/RMATRIX-PATCH.md) must really be the one
# built: fail when Cargo reports the [patch.crates-io] entry unused (an upstream version bump
# would silently drop the fix) or the crate graph takes mysql_common from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(cargo tree --locked -i mysql_common -e normal 2>&1) || { echo "$out"; exit 1; }
if grep -qi "was not used" <<<"$out"; then
  echo "check-patch: Cargo reports the mysql_common patch unused:" >&2
  grep -i "patch" <<<"$out" >&2
  exit 1
fi
if ! head -1 <<<"$out" | grep -q "vendor/mysql_common"; then
  echo "check-patch: mysql_common does not come from vendor/mysql_common:" >&2
  head -3 <<<"$out" >&2
  exit 1
fi
echo "check-patch: mysql_common comes from vendor/mysql_common ($(head -1 <<<"$out"))"
