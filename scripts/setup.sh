#!/usr/bin/env bash
# Everything the tests and benchmarks need on a fresh Debian machine: what the main job needs
# (scripts/setup-main.sh: the Docker engine, base images, a build), then the peer tools
# rmatrix is compared with and what single tests use (a browser, sshd, socat, a registry).
# Idempotent: each step checks first.
set -euo pipefail
cd "$(dirname "$0")/.."

# The release build runs behind everything below, which waits mostly on the network.
scripts/setup-main.sh --build-behind

# The server images the tests use, built behind the rest too (containers/prebuild.sh): on a
# fresh machine each is a download and install of its packages, otherwise a cache hit.
mkdir -p "${CARGO_TARGET_DIR:-target}"
prebuild_log=${CARGO_TARGET_DIR:-target}/prebuild.log
containers/prebuild.sh mariadb-10.11 mariadb-11.8 redis-7.0 redis-6.0 valkey-8.1 postgres-15 \
  mysql-9.7 source-redis >"$prebuild_log" 2>&1 </dev/null &
prebuild=$!

# Peers (sysbench, redis-benchmark, mariadb-slap; pgbench below), and chromium for the HTML report's
# browser test; socat for the pool tests' second engine (containers/second-engine.sh); perf
# (linux-perf) for server profiles (`profile:`). The real readers of rmatrix's outputs that
# tests hand them to, run by /usr/bin/python3: python3-jsonschema and python3-yaml (the matrix
# schema, tests/it/schema_validator.rs), python3-junitparser and, for junit2html below,
# python3-jinja2 and python3-pip (JUnit, tests/it/junit_readers.rs).
missing=()
for pkg in sysbench redis-tools mariadb-client chromium socat linux-perf prometheus libxml2-utils groff-base \
  python3-jsonschema python3-yaml python3-junitparser python3-jinja2 python3-pip; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# junit2html, the second JUnit reader (PyPI; Debian has none): its pinned wheel, checked
# against its sha256 and unpacked under target/readers/, which the test puts on PYTHONPATH.
# Nothing is installed (Debian's pip is externally managed): pip only downloads.
junit2html_version=31.1.4
junit2html_sha256=dfd100dfdc0ee91e1ffbd1774669b209dec115b285e06af9e31d8743db8931e6
junit2html_dir=target/readers/junit2html-$junit2html_version
if [ ! -d "$junit2html_dir" ]; then
  echo "setup: fetching junit2html $junit2html_version from PyPI into $junit2html_dir" >&2
  tmp=$(mktemp -d)
  /usr/bin/python3 -m pip download --quiet --no-deps --only-binary=:all: \
    "junit2html==$junit2html_version" -d "$tmp"
  wheel="$tmp/junit2html-$junit2html_version-py3-none-any.whl"
  echo "$junit2html_sha256  $wheel" | sha256sum --check --quiet
  /usr/bin/python3 -m zipfile -e "$wheel" "$tmp/unpacked"
  mkdir -p target/readers
  mv "$tmp/unpacked" "$junit2html_dir"
  rm -rf "$tmp"
fi

# pgbench, the PostgreSQL peer: Debian 12 ships it in the server package, postgresql-15,
# whose install would create and start a cluster of its own. Neither is wanted here: no
# cluster is created (createcluster.conf) and service starts are denied (policy-rc.d).
if ! command -v pgbench >/dev/null 2>&1 || ! dpkg -s postgresql-15 >/dev/null 2>&1; then
  echo "setup: installing postgresql-15 for pgbench (no cluster is created or started)" >&2
  sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  sudo_ mkdir -p /etc/postgresql-common
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    echo 'create_main_cluster = false' | sudo_ tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  own_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | sudo_ tee /usr/sbin/policy-rc.d >/dev/null
    sudo_ chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
  [ -n "$own_policy" ] && sudo_ rm -f /usr/sbin/policy-rc.d
fi

# The results store's tests on PostgreSQL: a cluster of their own on 127.0.0.1:5439.
scripts/store-postgres.sh start

# The pool tests' ssh:// engine needs sshd's binary only: the package would also start and
# enable the system's sshd, which a test set-up has no business doing, so service starts are
# denied during the install (policy-rc.d) and the units it enabled are disabled again.
if ! dpkg -s openssh-server >/dev/null 2>&1; then
  echo "setup: installing openssh-server (binary only: the system sshd is left off)" >&2
  sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  own_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | sudo_ tee /usr/sbin/policy-rc.d >/dev/null
    sudo_ chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
  [ -n "$own_policy" ] && sudo_ rm -f /usr/sbin/policy-rc.d
  if command -v systemctl >/dev/null 2>&1; then
    sudo_ systemctl disable --quiet ssh.service ssh.socket 2>/dev/null || true
  fi
fi

# Debian's source packages (`apt-get source redis`) for the source-build and bisect tests
# (scripts/redis-source-repo.sh): a deb-src list of Debian's own repository, used only by
# those scripts' apt calls.
src_list=/etc/apt/sources.list.d/rmatrix-src.sources
if [ ! -f "$src_list" ]; then
  echo "setup: writing $src_list (deb-src of Debian bookworm)" >&2
  sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" "Suites: bookworm" \
    "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
    sudo_ tee "$src_list" >/dev/null
fi

# The pool tests' registry on 127.0.0.1:5000 (Debian's docker-registry; `image:` pulls).
containers/local-registry.sh start

# Nothing below is a step of its own: what ran behind the steps above is waited for.
wait "$prebuild" || { echo "setup: prebuilding images failed:" >&2; cat "$prebuild_log" >&2; exit 1; }
[ -s "$prebuild_log" ] && cat "$prebuild_log" >&2
scripts/build-behind.sh wait
