#!/usr/bin/env bash
# Checks that the docs say what the tree holds, so that nothing in them is hand-kept stale:
#   1. every relative link (and #anchor) in README.md and docs/*.md resolves;
#   2. every repository path they name (src/..., scripts/..., matrices/... in the text or in
#      code) exists; a module may be `x.rs` or `x/` (`x/mod.rs`), either spelling passes;
#   3. docs/architecture.md's layer table names every top-level module of src/, only those,
#      each at the layer scripts/check-layers.sh enforces, and the submodules it names exist;
#   4. the README's exit-code table lists exactly the codes of src/commands/exit.rs (the
#      `=> N,` arms of its one match).
# Run from anywhere; exit 1 lists every problem with its file.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C.UTF-8

docs=(README.md docs/*.md)
bad=0
fail() {
  echo "$1"
  bad=1
}

# A module path exists as written or in the module's other spelling.
module_exists() { # path without a trailing slash
  local p=$1
  [[ -e $p ]] && return 0
  case $p in
    *.rs) [[ -d ${p%.rs} ]] ;;
    *) [[ -e $p.rs || -e $p/mod.rs ]] ;;
  esac
}

# The file without its fenced code blocks and inline code, where links are not links.
prose() { # file
  awk '/^[[:space:]]*```/ {code = !code; next} !code' "$1" | sed -E 's/`[^`]*`//g'
}

# GitHub's anchors of a Markdown file's headings.
anchors() { # file
  awk '/^[[:space:]]*```/ {code = !code; next} !code && /^#+ /' "$1" |
    sed -E 's/^#+ +//; s/[[:space:]]+$//' | tr '[:upper:]' '[:lower:]' |
    sed -E 's/[^[:alnum:] _-]//g; s/ /-/g'
}

# 1. Relative links and their anchors.
for f in "${docs[@]}"; do
  dir=$(dirname "$f")
  while IFS= read -r target; do
    case $target in http://* | https://* | mailto:*) continue ;; esac
    path=${target%%#*}
    anchor=
    [[ $target == *"#"* ]] && anchor=${target#*#}
    if [[ -z $path ]]; then
      dest=$f
    else
      dest=$dir/$path
      if [[ ! -e $dest ]]; then
        fail "$f: link to $target: no such file"
        continue
      fi
    fi
    if [[ -n $anchor && $dest == *.md && -f $dest ]] && ! grep -qxF -- "$anchor" <<<"$(anchors "$dest")"; then
      fail "$f: link to $target: no heading with that anchor in $dest"
    fi
  done < <(prose "$f" | grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\((.*)\)$/\1/')
done

# 2. Repository paths named anywhere in the docs (placeholders such as <name> or * skipped;
# reports/runs is where runs go, made by the first run).
roots='src|scripts|matrices|containers|tests|docs|reports|vendor|fuzz'
for f in "${docs[@]}"; do
  while IFS= read -r p; do
    [[ $p == *"<" || $p == *"*" ]] && continue
    p=${p%%[.,:;]}
    p=${p%/}
    [[ $p == reports/runs ]] && continue
    module_exists "$p" || fail "$f: names \`$p\`, which does not exist"
  done < <(grep -oP "(?<![\\w/.-])($roots)/[\\w./+-]*[<*]?" "$f" | sort -u)
done

# 3. The layer table of docs/architecture.md against src/ and scripts/check-layers.sh.
layer_fn=$(sed -n '/^layer_of() {/,/^}/p' scripts/check-layers.sh)
[[ -n $layer_fn ]] || fail "scripts/check-layers.sh: no layer_of function to check the layer table against"
eval "$layer_fn"
table=$(grep -E '^\| [0-9]+ \|' docs/architecture.md || true)
[[ -n $table ]] || fail "docs/architecture.md: no layer table (rows \`| N | modules | job |\`)"
listed=()
while IFS='|' read -r _ layer mods job _; do
  layer=${layer// /}
  row_mods=$(grep -oE '`[a-z_]+`' <<<"$mods" | tr -d '`')
  for m in $row_mods; do
    listed+=("$m")
    module_exists "src/$m" || fail "docs/architecture.md: layer $layer names module \`$m\`: no src/$m.rs or src/$m/"
    [[ $(layer_of "$m") == "$layer" ]] ||
      fail "docs/architecture.md: \`$m\` is at layer $layer in the table, $(layer_of "$m") in scripts/check-layers.sh"
  done
  # Submodules the job column names: `address`, `mysql/flavor.rs`, `slap/`, `report::summary`.
  for s in $(grep -oE '`[a-z_][a-z0-9_/:.]*[a-z0-9_/]`' <<<"$job" | tr -d '`' | sed 's#::#/#g'); do
    s=${s%/}
    found=0
    module_exists "src/$s" && found=1
    for m in $row_mods; do module_exists "src/$m/$s" && found=1; done
    ((found)) || fail "docs/architecture.md: layer $layer names \`$s\`, found under none of: $(echo $row_mods)"
  done
done <<<"$table"
for entry in src/*; do
  m=$(basename "$entry" .rs)
  [[ $m == lib || $m == main ]] && continue
  [[ " ${listed[*]} " == *" $m "* ]] || fail "docs/architecture.md: module \`$m\` of src/ is missing from the layer table"
done

# 4. Exit codes: the README's table against the one match in src/commands/exit.rs.
src_codes=$(grep -hoE '=> [0-9]+,' src/commands/exit.rs | grep -oE '[0-9]+' | sort -nu | xargs)
readme_codes=$(awk '/^#+ Exit codes/ {on = 1; next} on && /^#/ {on = 0} on' README.md |
  grep -oE '^\| [0-9]+ \|' | grep -oE '[0-9]+' | sort -nu | xargs)
if [[ -z $src_codes ]]; then
  fail "src/commands/exit.rs: no exit codes found (\`=> N,\`): update scripts/check-docs.sh"
elif [[ $src_codes != "$readme_codes" ]]; then
  fail "README.md: exit codes table lists [$readme_codes], src/ defines [$src_codes]"
fi

if ((bad)); then
  echo "check-docs: the docs disagree with the tree (above)" >&2
  exit 1
fi
echo "check-docs: ok"
