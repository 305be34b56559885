#!/usr/bin/env bash
# Creates in a Bencher project the measures of rmatrix's Bencher Metric Format export
# (`report --format bmf`, `compare --format bmf`) that Bencher has not built in, each with its
# name and units, before a first upload: Bencher would otherwise create each on first sight,
# named by its slug, with a generic unit. Idempotent: a measure the project has is left as it
# is. The list is scripts/bencher-measures.tsv, which a unit test of src/export/bmf.rs holds to
# what the exporter emits (docs/compare.md lists it).
#
#   BENCHER_PROJECT=my-project BENCHER_API_TOKEN=... scripts/bencher-measures.sh
#
# The bencher CLI (v0.4 or later: `bencher measure create PROJECT --name --slug --units`)
# reads BENCHER_API_TOKEN, and BENCHER_HOST for a self-hosted server.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "bencher-measures: $*" >&2
  exit 1
}
project=${BENCHER_PROJECT:-}
[[ -n $project ]] || fail "set BENCHER_PROJECT to the project's slug or UUID"
[[ -n ${BENCHER_API_TOKEN:-} ]] || fail "set BENCHER_API_TOKEN to an API token that may create measures"
# A slug or a UUID, never an option of the CLI's.
[[ $project =~ ^[A-Za-z0-9][A-Za-z0-9_-]*$ ]] || fail "BENCHER_PROJECT is not a project slug or UUID"
command -v bencher >/dev/null || fail "the bencher CLI is not on PATH (https://bencher.dev/docs/how-to/install-cli/)"

while IFS=$'\t' read -r slug name units metric origin; do
  [[ -z $slug || $slug == \#* || $origin == built-in ]] && continue
  if seen=$(bencher measure view "$project" "$slug" 2>&1); then
    echo "bencher-measures: $slug is there"
  elif grep -q 'Status: 404' <<<"$seen"; then
    bencher measure create "$project" --name "$name" --slug "$slug" --units "$units" >/dev/null
    echo "bencher-measures: created $slug ($units, rmatrix's $metric)"
  else
    fail "cannot tell whether $slug is there: $seen"
  fi
done <scripts/bencher-measures.tsv
