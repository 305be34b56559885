#!/bin/sh
# rmatrix Redis/Valkey entrypoint. The rendered config is mounted read-only at
# /etc/rmatrix/redis.conf; the password comes from REDIS_PASSWORD and is appended to a private
# copy, so it appears neither on a command line nor in the run directory. Arguments go to the
# server (rmatrix passes --port/--bind there).
set -eu
: "${REDIS_PASSWORD:?REDIS_PASSWORD must be set}"
umask 077
mkdir -p /run/rmatrix /data
cp /etc/rmatrix/redis.conf /run/rmatrix/redis.conf
printf 'requirepass "%s"\n' "$REDIS_PASSWORD" >>/run/rmatrix/redis.conf
unset REDIS_PASSWORD
server=redis-server
command -v valkey-server >/dev/null 2>&1 && server=valkey-server
cd /data
exec "$server" /run/rmatrix/redis.conf "$@"
