#!/usr/bin/env bash
# Checks that no module of rmatrix imports a module of a higher layer (docs/architecture.md).
# Every `crate::<module>` path in src/ is checked against the layer of the file's module.
# Run from anywhere; exit 1 lists each upward import with its file and line.
set -euo pipefail
cd "$(dirname "$0")/.."

# The layers, bottom first. A module may use its own layer and those below it.
layer_of() {
  case "$1" in
    escape | model | stats) echo 0 ;;
    input | measure) echo 1 ;;
    servers) echo 2 ;;
    workloads) echo 3 ;;
    matrix) echo 4 ;;
    results) echo 5 ;;
    report) echo 6 ;;
    compare) echo 7 ;;
    export) echo 8 ;;
    cli | commands | drive | progress | run | lib | main) echo 9 ;;
    *) echo "?" ;;
  esac
}

bad=0
while IFS= read -r file; do
  rel=${file#src/}
  own=${rel%%/*}
  own=${own%.rs}
  own_layer=$(layer_of "$own")
  if [[ $own_layer == "?" ]]; then
    echo "$file: module \`$own\` has no layer: add it to scripts/check-layers.sh and docs/architecture.md"
    bad=1
    continue
  fi
  # `crate::x` anywhere in code (use lines, paths in expressions); comments are skipped.
  while IFS=: read -r line text; do
    for used in $(grep -oE 'crate::[a-z_]+' <<<"$text" | sed 's/crate:://' | sort -u); do
      used_layer=$(layer_of "$used")
      if [[ $used_layer == "?" ]]; then
        continue # an item of lib.rs (crate::exit, crate::UsageError): the top layer's own
      fi
      if ((used_layer > own_layer)); then
        echo "$file:$line: \`$own\` (layer $own_layer) uses \`$used\` (layer $used_layer)"
        bad=1
      fi
    done
  done < <(grep -nE 'crate::[a-z_]+' "$file" | grep -vE '^[0-9]+:\s*//')
done < <(find src -name '*.rs' | sort)

if ((bad)); then
  echo "check-layers: upward imports found (layer order: docs/architecture.md)" >&2
  exit 1
fi
echo "check-layers: ok"
