#!/usr/bin/env bash
# A small git repository of Redis's real source, for the source-build and bisect tests:
# Debian's source package of Redis (bookworm: 7.0.15, fetched once into a cache) imported
# as the first commit, then seven commits, one of which (`slow GET`) makes every GET slower
# while SET stays as it was. Prints each commit as `<hash> <subject>`.
#
#   scripts/redis-source-repo.sh DIR [SPIN_US | work:N]
#
# DIR must not exist. The slowdown is one of:
# - SPIN_US (default 20): the GET handler's extra time in microseconds of busy CPU, about
#   twice what a GET costs the server here, so that GET falls to a third, far beyond the
#   run-to-run noise of this 2-core machine (iterations 10-30% apart, whole runs 15%).
# - work:N: N rounds of a fixed loop in the GET handler (a volatile sum, so the compiler
#   keeps it): extra instructions, the same number on every GET and every machine, for
#   counted mode (docs/counted.md measures what N adds).
# The source cache is $RMATRIX_SOURCE_CACHE (default /var/cache/rmatrix/source).
set -euo pipefail
dir=${1:?usage: redis-source-repo.sh DIR [SPIN_US | work:N]}
slow=${2:-20}
if [[ $slow =~ ^[0-9]{1,4}$ ]]; then
  # GET waits SPIN_US microseconds of busy CPU before it answers.
  slow_get="    long long spin_until = ustime() + $slow;\n    while (ustime() < spin_until) {}"
elif [[ $slow =~ ^work:([0-9]{1,5})$ ]]; then
  # GET does N rounds of work that nothing optimises away before it answers.
  slow_get="    { volatile unsigned long work = 0; for (int i = 0; i < ${BASH_REMATCH[1]}; i++) work += i; }"
else
  echo "the slowdown must be SPIN_US (a number of microseconds) or work:N (rounds)" >&2
  exit 2
fi
[ -e "$dir" ] && { echo "$dir exists" >&2; exit 2; }
cache=${RMATRIX_SOURCE_CACHE:-/var/cache/rmatrix/source}/redis

if [ ! -d "$cache/tree" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/fetch.XXXXXX")
  # Debian's own source list, for `apt-get source` only (scripts/setup.sh writes it).
  list=/etc/apt/sources.list.d/rmatrix-src.sources
  [ -f "$list" ] || { echo "no $list: run scripts/setup.sh" >&2; exit 1; }
  lists=$cache/lists
  mkdir -p "$lists/partial"
  apt_opts=(-o "Dir::Etc::sourcelist=$list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$lists"
    -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" -qq update
  (cd "$tmp" && apt-get "${apt_opts[@]}" -qq source redis >/dev/null)
  src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'redis-*' | head -1)
  [ -n "$src" ] || { echo "apt-get source redis gave no tree" >&2; exit 1; }
  rm -rf "$src/debian"
  mv "$src" "$cache/tree"
  rm -rf "$tmp"
fi

export GIT_AUTHOR_NAME=rmatrix GIT_AUTHOR_EMAIL=rmatrix@example.invalid
export GIT_COMMITTER_NAME=rmatrix GIT_COMMITTER_EMAIL=rmatrix@example.invalid
export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
mkdir -p "$dir"
cp -a "$cache/tree/." "$dir/"
cd "$dir"
git init -q -b main
commit() { git add -A && git commit -qm "$1"; }
commit "import Redis $(sed -n 's/.*REDIS_VERSION "\(.*\)"/\1/p' src/version.h) (Debian's source)"
echo "Built by rmatrix's bisect test." >>README.md
commit "README: a line"
sed -i 's|^void setCommand(client \*c) {|/* SET: the command this test keeps as it is. */\n&|' src/t_string.c
commit "t_string.c: a comment on SET"
echo "# rmatrix test" >>redis.conf
commit "redis.conf: a comment"
sed -i "s|^void getCommand(client \*c) {|&\n$slow_get|" src/t_string.c
commit "slow GET"
echo "Another line." >>README.md
commit "README: another line"
sed -i 's|^void lpushCommand(client \*c) {|/* LPUSH. */\n&|' src/t_list.c
commit "t_list.c: a comment"
echo "# end" >>redis.conf
commit "redis.conf: another comment"
git log --reverse --format='%H %s'
