#!/usr/bin/env bash
# Checks that no module of rmatrix imports a module of a higher layer (docs/architecture.md).
# Every `crate::` path in src/ is checked against the layer of the file's module: a module's
# (`crate::model::Cell`), each name of a group (`use crate::{model, exit};`, over several
# lines too), and an item of lib.rs (`crate::UsageError`, `crate::exit`), which is the top
# layer's. Run from anywhere; exit 1 lists each upward import with its file and line.
set -euo pipefail
cd "$(dirname "$0")/.."

# The layers, bottom first. A module may use its own layer and those below it.
layer_of() {
  case "$1" in
    error | escape | model | stats) echo 0 ;;
    input | measure) echo 1 ;;
    servers) echo 2 ;;
    workloads) echo 3 ;;
    matrix) echo 4 ;;
    results) echo 5 ;;
    report) echo 6 ;;
    compare) echo 7 ;;
    export | store) echo 8 ;;
    commands | drive | progress | run | bisect | ab | lib | main) echo 9 ;;
    *) echo "?" ;;
  esac
}

# "line name" for each name a `crate::` path starts with, including every top-level name of a
# `crate::{...}` group (nested groups belong to the name before them).
crate_paths() {
  perl -ne '
    next if m{^\s*//};
    my $text = $_;
    while ($text =~ /\S/) {
      if ($depth > 0) {
        if ($text =~ s/^\s*(\w+)//) { print "$. $1\n" if $expect; $expect = 0 }
        elsif ($text =~ s/^\s*\{//) { $depth++ }
        elsif ($text =~ s/^\s*\}//) { $depth-- }
        elsif ($text =~ s/^\s*,//) { $expect = 1 if $depth == 1 }
        else { $text =~ s/^\s*.// }
      } elsif ($text =~ s/.*?\bcrate::(\{|\w+)//) {
        if ($1 eq "{") { $depth = 1; $expect = 1 } else { print "$. $1\n" }
      } else {
        $text = "";
      }
    }
  ' "$1"
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
  # Each path's first name after `crate::`, as "line name"; comment lines are skipped.
  while read -r line used; do
    used_layer=$(layer_of "$used")
    if [[ $used_layer == "?" ]]; then
      used_layer=$(layer_of lib) # not a module: an item of lib.rs
    fi
    if ((used_layer > own_layer)); then
      echo "$file:$line: \`$own\` (layer $own_layer) uses \`crate::$used\` (layer $used_layer)"
      bad=1
    fi
  done < <(crate_paths "$file" | sort -u)
done < <(find src -name '*.rs' | sort)

if ((bad)); then
  echo "check-layers: upward imports found (layer order: docs/architecture.md)" >&2
  exit 1
fi
echo "check-layers: ok"
