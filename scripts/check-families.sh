#!/usr/bin/env bash
# Checks that server families and workload kinds stay in their folders (docs/architecture.md,
# "Adding things"): outside src/servers/<family>/ and src/workloads/<kind>/, no code in src/
# names a family or a kind, as a string ("redis") or as a type, variant or path (`Redis`,
# `ServerKind::Redis`, `WorkloadSpec::Slap`, `servers::mysql`), except the registry lines
# allowed below. And a workload kind's folder names no family either (it speaks to every
# family of a language through its trait, `servers::sql`), but for the kinds listed below
# as bound to one family's own product. Run from anywhere; exit 1 lists each place with its
# file and line.
#
# What is read: code lines of src/**/*.rs. Not read: comments (lines starting with `//`:
# prose may give examples) and each file's `#[cfg(test)] mod` (tests use real names as
# data). A trailing comment on a code line is read.
set -euo pipefail
cd "$(dirname "$0")/.."

# The names: every family folder and kind folder (so a new one is checked without editing
# this script), with `_` and without (`redis_benchmark`, `RedisBenchmark`), and the products
# and files a family folder serves, which name it as surely. A new family adds its products.
folders() { find "$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort; }
# Folders of src/servers that hold a job every family shares, not a family.
jobs="engines images"
families=$(folders src/servers | grep -vxF -f <(tr ' ' '\n' <<<"$jobs"))
kinds=$(folders src/workloads)
products="mariadb percona valkey mycnf my\\.cnf mysqlslap postgresql pgsql"
names=""
for n in $families $kinds; do
  names="$names $n ${n//_/}"
done
pattern=$(tr ' ' '\n' <<<"$names $products" | grep -v '^$' | sort -u | paste -sd '|')
# A family by name only: what a kind's folder may not say.
family_names=""
for n in $families; do
  family_names="$family_names $n ${n//_/}"
done
family_pattern=$(tr ' ' '\n' <<<"$family_names $products" | grep -v '^$' | sort -u | paste -sd '|')

# The folders a name belongs in: nothing under them is read. And src/store/: the results
# store keeps runs in SQLite or PostgreSQL, databases of its own, not server families.
owned=$( (for f in $families; do echo "src/servers/$f/"; done
  for k in $kinds; do echo "src/workloads/$k/"; done
  echo "src/store/") | paste -sd '|')

# The allow-list, two kinds of registry line and nothing else:
# 1. `pub mod <folder>;` (or `pub(crate) mod`) in src/servers/mod.rs and src/workloads/mod.rs: declaring a folder.
# 2. An entry of a registry list (`families!` in src/servers/kind.rs, `kinds!` in
#    src/workloads/mod.rs): `Variant(folder) = "name",` or `Variant(path::Type) = "name",`,
#    the one line that adds a family or a kind.
allowed() {
  local file=$1 text=$2
  case "$file" in
    src/servers/mod.rs | src/workloads/mod.rs)
      [[ $text =~ ^pub(\(crate\))?\ mod\ [a-z_]+\;$ ]] && return 0 ;;
  esac
  case "$file" in
    src/servers/kind.rs | src/workloads/mod.rs)
      [[ $text =~ ^\ +[A-Z][A-Za-z]*\([a-z_]+(::[a-z_]+)*(::[A-Z][A-Za-z]*)?\)\ =\ \"[a-z_]+\",$ ]] && return 0 ;;
  esac
  return 1
}

# Code lines (comments and test modules skipped) that match the regex $1 once the words of
# the regex $2 are taken out (case-insensitive), as file:line:text; then the files.
named() {
  local pattern=$1 spared=$2
  shift 2
  awk -v pattern="$pattern" -v spared="$spared" '
    FNR == 1 { skip = 0; test = 0 }
    # Braces outside strings and char literals, to find where a test module ends.
    function depth(s) {
      gsub(/"([^"\\]|\\.)*"/, "", s)
      gsub(/'\''([^'\''\\]|\\.)'\''/, "", s)
      return gsub(/\{/, "{", s) - gsub(/\}/, "}", s)
    }
    skip { level += depth($0); if (level <= 0) skip = 0; next }
    test && /^[[:space:]]*(pub(\([a-z]+\))? )?mod [a-z_]+ *\{/ {
      test = 0; skip = 1; level = depth($0); if (level <= 0) skip = 0; next
    }
    { test = 0 }
    /^[[:space:]]*#\[cfg\(test\)\]/ { test = 1; next }
    /^[[:space:]]*\/\// { next }
    {
      line = tolower($0)
      if (spared != "") gsub(spared, "", line)
      if (line ~ pattern) print FILENAME ":" FNR ":" $0
    }
  ' "$@"
}

bad=0
# A module's tests in a file of their own (`#[cfg(test)] mod tests;` -> tests.rs) are tests.
files=$(find src -name '*.rs' ! -name tests.rs | grep -vE "^($owned)" | sort)
while IFS=: read -r file line text; do
  [[ -z $file ]] && continue
  if ! allowed "$file" "$text"; then
    echo "$file:$line: ${text#"${text%%[![:space:]]*}"}"
    bad=1
  fi
done < <(named "$pattern" "" $files)

# A workload kind's folder names no family: a kind speaks to every family of a language
# through its trait (`servers::sql` for SQL), so that a new family needs no line there and a
# new kind is checked from its first line. Not read: the folders of the kinds bound to one
# family's own product, which name it as surely as its folder does:
#   pgbench          PostgreSQL's pgbench program and its scripts
#   redis            the Redis protocol (RESP) and its commands, redis-benchmark's tests
#   redis_benchmark  Redis's redis-benchmark and memtier programs
#   slap             mysqlslap's MySQL statements and its program
#   sqlbench         MySQL's sql-bench suite and its MySQL-only SQL
bound_kinds="pgbench redis redis_benchmark slap sqlbench"
# Words that name a family's product but are a tool's own option, which a kind copies:
# oltp's `mysql_storage_engine` is sysbench's `--mysql-storage-engine`.
spared="mysql_storage_engine"
for k in $(grep -vxF -f <(tr ' ' '\n' <<<"$bound_kinds") <<<"$kinds"); do
  kind_files=$(find "src/workloads/$k" -name '*.rs' ! -name tests.rs | sort)
  while IFS=: read -r file line text; do
    [[ -z $file ]] && continue
    echo "$file:$line: ${text#"${text%%[![:space:]]*}"} (\`$k\` names no family)"
    bad=1
  done < <(named "$family_pattern" "$spared" $kind_files)
done

if ((bad)); then
  echo "check-families: a family or a workload kind is named outside its folder: move the" \
    "decision into src/servers/<family>/ or src/workloads/<kind>/ behind its trait (a" \
    "kind's folder names no family: its trait, e.g. servers::sql, says what differs)" >&2
  exit 1
fi
echo "check-families: ok"
