#!/usr/bin/env bash
# Build server images ahead of their first use, with the engine's classic builder: rmatrix
# builds through the same builder, so its own build of the folder later finds every layer in
# the cache (the packages' download and install, the slow part) and takes seconds. The set-up
# runs this behind the release build (scripts/setup.sh), so a fresh machine's tests do not
# wait on package downloads one server at a time.
#
#   containers/prebuild.sh NAME...   NAME: a `build:` name of containers/builds.yaml
#                                    (mariadb-10.11), or source-redis (the `source:` recipe's
#                                    toolchain and run image)
# A build that fails is said and skipped: rmatrix builds the image itself when a matrix needs
# it, and reports the failure there with the build's own log.
set -euo pipefail
cd "$(dirname "$0")"

say() { echo "prebuild: $*" >&2; }

# One folder with its build arguments ("suite=bookworm package=redis-server"), quietly.
build() {
  local dir=$1 args=() kv
  shift
  for kv in "$@"; do args+=(--build-arg "$kv"); done
  if ! DOCKER_BUILDKIT=0 docker build -q --network host "${args[@]}" "$dir" >/dev/null 2>"$tmp/err"; then
    say "building $dir ($*) failed; rmatrix will build it when needed:"
    tail -5 "$tmp/err" >&2
  fi
}

# `name: {dir: D, args: {k: v, ...}}` of builds.yaml, as `D k=v ...`.
entry() {
  sed -nE "s/^$1: *\{dir: *([a-z0-9_-]+), *args: *\{([^}]*)\}\}.*/\1 \2/p" builds.yaml |
    sed -E 's/: */=/g; s/, */ /g'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in "$@"; do
  case "$name" in
    source-redis)
      build source/redis/build suite=bookworm
      # The run image's context gets the build's output in out/ and the entrypoint from
      # rmatrix; stand-ins are enough to cache the packages' layer, which comes first. Not
      # empty ones: the classic builder fails to export an image whose last COPY added an
      # empty layer ("layer does not exist").
      cp -r source/redis/run "$tmp/run"
      mkdir -p "$tmp/run/out/usr/local/share/rmatrix-prebuild"
      echo prebuild >"$tmp/run/out/usr/local/share/rmatrix-prebuild/README"
      echo '#!/bin/sh' >"$tmp/run/entrypoint.sh"
      build "$tmp/run" suite=bookworm
      ;;
    *)
      [[ "$name" =~ ^[a-z0-9.-]+$ ]] || { say "not a build name: $name"; exit 2; }
      read -r -a spec <<<"$(entry "${name//./\\.}")"
      [ ${#spec[@]} -gt 0 ] || { say "no $name in containers/builds.yaml"; exit 2; }
      build "${spec[@]}"
      ;;
  esac
done
