#!/bin/sh
# rmatrix PostgreSQL entrypoint: initialise an empty datadir as user postgres with the
# superuser `postgres`'s password from POSTGRES_PASSWORD, include rmatrix's rendered config,
# then exec postgres with the given arguments (`-c name=value`: listen address, port, socket).
set -eu
datadir=/var/lib/postgresql/data
bin=/usr/lib/postgresql/bin
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
mkdir -p "$datadir" /run/postgresql
chown postgres:postgres "$datadir" /run/postgresql
chmod 700 "$datadir"
if [ ! -s "$datadir/PG_VERSION" ]; then
  # The password never appears on a command line: initdb reads it from a file only
  # postgres can read, removed at once.
  umask 077
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  as_postgres "$bin/initdb" -D "$datadir" -U postgres --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 \
    >/tmp/initdb.log 2>&1 || { cat /tmp/initdb.log >&2; rm -f "$pwfile"; exit 1; }
  rm -f "$pwfile"
  # Clients on a bridge network come from the container's network, not 127.0.0.1.
  echo 'host all all 0.0.0.0/0 scram-sha-256' >>"$datadir/pg_hba.conf"
  # The matrix's settings, last: they override initdb's.
  echo "include_if_exists '/etc/rmatrix/postgresql.conf'" >>"$datadir/postgresql.conf"
fi
unset POSTGRES_PASSWORD
# setpriv execs: postgres is the container's main process (its maps, its signals).
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$datadir" "$@"
