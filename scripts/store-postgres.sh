#!/usr/bin/env bash
# A PostgreSQL server on 127.0.0.1:5439 for the results store's tests (`rmatrix store` on
# PostgreSQL): a cluster of its own, `15 rmatrix-store`, from Debian's postgresql-15 (which
# scripts/setup.sh installs for pgbench, with no cluster of its own). A role `rmatrix` with
# a test-only password may create databases; each test makes one and drops it. Idempotent.
# Usage:
#   scripts/store-postgres.sh start     create (when missing) and start it
#   scripts/store-postgres.sh url       print the URL the tests use
set -euo pipefail

version=15
name=rmatrix-store
port=5439
password=rmatrix-store-test
url="postgres://rmatrix:$password@127.0.0.1:$port/postgres"
say() { echo "store-postgres: $*" >&2; }
as_postgres() { runuser -u postgres -- "$@"; }
answers() { pg_isready -q -h 127.0.0.1 -p "$port" 2>/dev/null; }

start() {
  # Read whole, not piped into grep -q: an early exit's SIGPIPE would fail the pipeline.
  clusters=$(pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' || true)
  if ! grep -qx "$version $name" <<<"$clusters"; then
    say "creating cluster $version/$name on 127.0.0.1:$port"
    pg_createcluster "$version" "$name" -p "$port" >/dev/null
    conf=/etc/postgresql/$version/$name/postgresql.conf
    printf '%s\n' "listen_addresses = '127.0.0.1'" "fsync = off" >>"$conf"
  fi
  if ! answers; then
    say "starting $version/$name"
    # pg_ctlcluster's daemon keeps no descriptor of ours (a flock held by a caller).
    pg_ctlcluster "$version" "$name" start </dev/null >/dev/null 2>&1 3>&- 4>&- 5>&- ||
      pg_ctlcluster "$version" "$name" start </dev/null
    for _ in $(seq 1 60); do answers && break; sleep 0.5; done
    answers || { say "the server did not answer on 127.0.0.1:$port"; exit 1; }
  fi
  as_postgres psql -q -p "$port" -d postgres -v ON_ERROR_STOP=1 >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rmatrix') THEN
    CREATE ROLE rmatrix LOGIN CREATEDB PASSWORD '$password';
  END IF;
END \$\$;
SQL
}

case ${1:-} in
  start) start ;;
  url) echo "$url" ;;
  *) echo "usage: $0 start|url" >&2; exit 2 ;;
esac
