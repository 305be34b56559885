#!/bin/sh
# Build the tree at /src with make, as upstream does it (its own jemalloc); the recipe's
# flags are make variables ("$@", checked by rmatrix: NAME=VALUE; Debian's patched tree needs
# USE_SYSTEM_JEMALLOC=yes, as its package is built). Compilers run through
# ccache, whose directory is a volume every build shares, so a neighbouring commit recompiles
# only what changed. The server is installed into /out/usr/local.
set -eu
export PATH="/usr/lib/ccache:$PATH" CCACHE_DIR=/ccache CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
cd /src
make -j"${JOBS:-2}" "$@"
make install PREFIX=/out/usr/local "$@"
ccache --show-stats | sed -n '1,12p'
