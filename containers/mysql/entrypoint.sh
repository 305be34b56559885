#!/bin/sh
# rmatrix MySQL entrypoint: initialise an empty datadir, create the benchmark account from
# MYSQL_ROOT_PASSWORD (or MARIADB_ROOT_PASSWORD) for MYSQL_ROOT_HOST (default %), then exec
# mysqld with the given arguments: the contract of the official mysql images.
set -eu
datadir=/var/lib/mysql
password="${MYSQL_ROOT_PASSWORD:-${MARIADB_ROOT_PASSWORD:-}}"
[ -n "$password" ] || { echo "MYSQL_ROOT_PASSWORD must be set" >&2; exit 1; }
host="${MYSQL_ROOT_HOST:-%}"
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
# --defaults-extra-file / --defaults-file are only honoured as the very first argument, and
# initialisation must see the same settings (innodb page size, lower_case_table_names...).
defaults=""
case "${1:-}" in --defaults-file=*|--defaults-extra-file=*) defaults="$1"; shift ;; esac
if [ ! -d "$datadir/mysql" ]; then
  mysqld $defaults --initialize-insecure --user=mysql --datadir="$datadir" \
    --log-error=/tmp/initialize.log >/dev/null 2>&1 \
    || { cat /tmp/initialize.log >&2; exit 1; }
fi
# The password never appears on a command line: it goes through an init file only root can
# read. Quotes and backslashes are escaped for the SQL string literal.
sql_string() { printf '%s' "$1" | sed -e "s/[\\\\']/\\\\&/g"; }
pw=$(sql_string "$password")
hst=$(sql_string "$host")
umask 077
cat >/run/rmatrix-init.sql <<SQL
ALTER USER 'root'@'localhost' IDENTIFIED BY '${pw}';
CREATE USER IF NOT EXISTS 'root'@'${hst}' IDENTIFIED BY '${pw}';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'${hst}' WITH GRANT OPTION;
SQL
chown mysql /run/rmatrix-init.sql
exec mysqld $defaults --user=mysql --datadir="$datadir" --init-file=/run/rmatrix-init.sql "$@"
