#!/usr/bin/env bash
# Built vs packaged: does a server built from source by its recipe (containers/source/<recipe>)
# perform like Debian's own package of the same source?
#
#   1. Fetches the Debian source package (FLAVOR=mariadb: mariadb 10.11 from bookworm, whose
#      deb-src scripts/setup.sh configures; FLAVOR=mysql: mysql-9.7 from sid, through a
#      private apt source list under the cache) into a cache directory, once, and turns the
#      unpacked tree (Debian's patches applied) into a git repository with one commit, as
#      `source:` servers want a git work tree.
#   2. Writes a matrix with matrices/binlog.yaml's configs, engines, workloads, length and
#      report, but two servers: `packaged` (the image `build: mariadb-10.11` or `mysql-9.7`,
#      Debian's binaries) and `built` (`source:` that repository at HEAD, the flavor's recipe).
#   3. Runs it twice, `--only server=packaged` and `--only server=built`, so that the two
#      servers' cells are in two run directories `rmatrix compare` can set against each other;
#      the built run builds the image (the toolchain image, the build container with the
#      ccache volume, the run image) unless an earlier run left it.
#   4. Prints the build's time from the built run's manifest.json
#      (images.built.source.build_seconds; none when the image was already there), then
#      `rmatrix compare --ignore server` of the built server's cells against the packaged one's.
# The first build of MariaDB takes about an hour on 2 cores, MySQL's longer; see
# docs/source-builds.md.
#
# Usage: scripts/bench/source-build.sh
# Env: FLAVOR (mariadb or mysql, default mariadb), RMATRIX (default target/release/rmatrix),
#      CACHE (the Debian source and its repository, default
#      ${XDG_CACHE_HOME:-~/.cache}/rmatrix/src/mariadb-10.11 or mysql-9.7), VERSION (a Debian version of the
#      source package to fetch, default the one apt offers), OUT (run directories, default a
#      temp dir), LOCK (a flock file serialising Docker users, optional).
set -euo pipefail
cd "$(dirname "$0")/../.."
RMATRIX=${RMATRIX:-${CARGO_TARGET_DIR:-target}/release/rmatrix}
case ${FLAVOR:-mariadb} in
  mariadb) package=mariadb; tree_glob='mariadb-10.11.*'; packaged=mariadb-10.11; recipe=mariadb; suite=bookworm ;;
  mysql) package=mysql-9.7; tree_glob='mysql-9.7-*'; packaged=mysql-9.7; recipe=mysql; suite=sid ;;
  *) echo "FLAVOR must be mariadb or mysql" >&2; exit 2 ;;
esac
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmatrix/src/$packaged}
OUT=${OUT:-$(mktemp -d /tmp/source-build.XXXXXX)}
mkdir -p "$OUT"
[ -x "$RMATRIX" ] || { echo "no $RMATRIX: run cargo build --release (or scripts/setup.sh)" >&2; exit 2; }
command -v dpkg-source >/dev/null || { echo "apt-get source needs dpkg-dev" >&2; exit 2; }

# apt's options for the source: bookworm's deb-src is the system's; sid's is a private list
# and index under the cache, so the system's apt is left as it was.
apt_opts=()
if [ "$suite" = sid ]; then
  aptdir=$CACHE/apt
  mkdir -p "$aptdir/lists/partial"
  echo 'deb-src http://deb.debian.org/debian sid main' >"$aptdir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$aptdir/lists" -o Acquire::Check-Valid-Until=false)
fi

# 1. The source, once: $CACHE/repo is a git repository of the unpacked Debian source.
repo=$CACHE/repo
if ! git -C "$repo" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  rm -rf "$CACHE/fetch" "$repo"
  mkdir -p "$CACHE/fetch"
  (
    cd "$CACHE/fetch"
    if [ ${#apt_opts[@]} -gt 0 ]; then apt-get "${apt_opts[@]}" update; fi
    apt-get "${apt_opts[@]}" source "$package${VERSION:+=$VERSION}"
  ) >"$CACHE/fetch.log" 2>&1 \
    || { cat "$CACHE/fetch.log" >&2; echo "apt-get source $package failed (is deb-src for $suite reachable?)" >&2; exit 1; }
  tree=$(find "$CACHE/fetch" -mindepth 1 -maxdepth 1 -type d -name "$tree_glob" | head -n 1)
  [ -n "$tree" ] || { echo "apt-get source gave no $tree_glob tree (see $CACHE/fetch.log)" >&2; exit 1; }
  dsc=$(find "$CACHE/fetch" -maxdepth 1 -name '*.dsc' | head -n 1)
  version=$(sed -n 's/^Version: //p' "$dsc")
  mv "$tree" "$repo"
  # A fixed author and date: the same source gives the same commit id on every machine.
  (
    cd "$repo"
    export GIT_AUTHOR_NAME=rmatrix GIT_AUTHOR_EMAIL=rmatrix@localhost
    export GIT_COMMITTER_NAME=rmatrix GIT_COMMITTER_EMAIL=rmatrix@localhost
    export GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z
    git init -q
    # -f: the tarball's files as they are, .gitignore or not; no line-ending rewriting.
    git -c core.autocrlf=false -c core.safecrlf=false add -A -f
    git -c core.autocrlf=false commit -qm "$package $version (Debian source package, patches applied)"
  )
  rm -rf "$CACHE/fetch"
fi
echo "source: $repo at $(git -C "$repo" log -1 --format='%h %s')"

# 2. The matrix: binlog.yaml without its name, description and servers, and ours instead.
matrix=$OUT/source-build.yaml
{
  cat <<YAML
name: source-build
description: $package built from Debian's source by the recipe $recipe vs Debian's package (scripts/bench/source-build.sh)
servers:
  packaged: {build: $packaged}
  built: {source: {git: $repo, rev: HEAD, recipe: $recipe}}
YAML
  awk 'BEGIN { skip = 1 }
    /^[A-Za-z_][A-Za-z0-9_-]*:/ { key = $1; sub(/:.*/, "", key); skip = (key == "name" || key == "description" || key == "servers") }
    !skip { print }
  ' matrices/binlog.yaml
} >"$matrix"

# 3. The two runs.
run() { # server out-dir
  local cmd=("$RMATRIX" run "$matrix" --only "server=$1" --out "$2")
  if [ -n "${LOCK:-}" ]; then cmd=(flock "$LOCK" "${cmd[@]}"); fi
  "${cmd[@]}" || { echo "run of $1 failed (exit $?)" >&2; exit 1; }
}
started=$(date +%s)
run packaged "$OUT/packaged"
run built "$OUT/built"

# 4. The build's time, and the compare.
python3 - "$OUT/built/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
src = (m.get("images", {}).get("built") or {}).get("source") or {}
secs = src.get("build_seconds")
what = "%s at %s, recipe %s %s" % (src.get("git"), (src.get("commit") or "?")[:12], src.get("recipe"), " ".join(src.get("flags") or []))
if secs is None:
    print("build: none in this run (the image was already there): " + what)
else:
    print("build: %.0f s (%d min %d s): %s" % (secs, secs // 60, secs % 60, what))
PY
code=0
"$RMATRIX" compare --ignore server "$OUT/packaged" "$OUT/built" || code=$?
[ "$code" -eq 0 ] || [ "$code" -eq 4 ] || { echo "compare failed (exit $code)" >&2; exit 1; }
elapsed=$(( $(date +%s) - started ))
echo "elapsed: $((elapsed / 60)) min $((elapsed % 60)) s; runs kept in $OUT"
