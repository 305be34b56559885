#!/usr/bin/env bash
# rmatrix's release build behind the set-up: compiling takes minutes of both cores, while most
# of the set-up (installing the engine and packages, seeding and building images) waits on
# the network and the disk, so the two overlap instead of following each other.
#   scripts/build-behind.sh start   start `cargo build --release $RMATRIX_BUILD_TARGETS` behind
#   scripts/build-behind.sh wait    wait for it (or build now, when none was started); exit 1
#                                   with the end of its log when it failed
# Idempotent: a build already behind is not started twice, and cargo builds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${CARGO_TARGET_DIR:-target}
mkdir -p "$dir"
pid_file=$dir/build-behind.pid
status_file=$dir/build-behind.status
log=$dir/build-behind.log
build=(cargo build --release --quiet ${RMATRIX_BUILD_TARGETS:-})

running() { [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; }

need_cargo() {
  command -v cargo >/dev/null 2>&1 && return 0
  echo "setup: cargo not found; install Rust from https://rustup.rs" >&2
  exit 1
}

case "${1:-}" in
  start)
    need_cargo
    running && exit 0
    rm -f "$status_file"
    # Its own session and no inherited descriptors beyond the log: a caller's pipe (CI's
    # output) must not stay open while nobody waits for the build.
    setsid bash -c 'log=$1 status=$2; shift 2; "$@" >"$log" 2>&1 </dev/null
      echo $? >"$status.tmp" && mv "$status.tmp" "$status"' \
      build-behind "$log" "$status_file" "${build[@]}" </dev/null >/dev/null 2>&1 &
    echo $! >"$pid_file"
    ;;
  wait)
    need_cargo
    while running; do sleep 1; done
    rm -f "$pid_file"
    if [ -f "$status_file" ]; then
      status=$(cat "$status_file")
      rm -f "$status_file"
      if [ "$status" != 0 ]; then
        echo "setup: the release build failed (exit $status); the end of $log:" >&2
        tail -40 "$log" >&2
        exit 1
      fi
    fi
    # What is left: everything when none was started (or one was interrupted), else what the
    # sources gained since it started (an edit during the set-up). With
    # RMATRIX_SECOND_BUILD=check (CI, where nothing is edited meanwhile) this second build
    # must compile nothing: a build script that touches a file it watches (build.rs and git's
    # index) would make every fresh clone compile the crate twice.
    [ "${RMATRIX_SECOND_BUILD:-}" = check ] && [ -n "${status:-}" ] || exec "${build[@]}"
    again=$(cargo build --release ${RMATRIX_BUILD_TARGETS:-} 2>&1) || { echo "$again" >&2; exit 1; }
    if grep -E '^ *Compiling' <<<"$again" >&2; then
      echo "setup: the second build compiled the above again, with no source edited" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: scripts/build-behind.sh start|wait" >&2
    exit 2
    ;;
esac
