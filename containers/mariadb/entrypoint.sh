#!/bin/sh
# rmatrix MariaDB entrypoint: initialise an empty datadir, create the benchmark account from
# MARIADB_ROOT_PASSWORD, then exec mariadbd with the given arguments (the same contract as the
# official mariadb/mysql images: env for the password, arguments go to the server).
set -eu
datadir=/var/lib/mysql
: "${MARIADB_ROOT_PASSWORD:?MARIADB_ROOT_PASSWORD must be set}"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
if [ ! -d "$datadir/mysql" ]; then
  mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db \
    --auth-root-authentication-method=socket >/tmp/install-db.log 2>&1 \
    || { cat /tmp/install-db.log >&2; exit 1; }
fi
# The password never appears on a command line: it goes through an init file only root can read.
umask 077
cat >/run/rmatrix-init.sql <<SQL
DELETE FROM mysql.global_priv WHERE User = '';
FLUSH PRIVILEGES;
ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('${MARIADB_ROOT_PASSWORD}');
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD}';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
SQL
chown mysql /run/rmatrix-init.sql
# --defaults-extra-file / --defaults-file are only honoured as the very first argument.
defaults=""
case "${1:-}" in --defaults-file=*|--defaults-extra-file=*) defaults="$1"; shift ;; esac
exec mariadbd $defaults --user=mysql --datadir="$datadir" --init-file=/run/rmatrix-init.sql "$@"
