#!/bin/bash
# On the first start: the system tables, root@'%' with MARIADB_ROOT_PASSWORD (or none, given
# MARIADB_ALLOW_EMPTY_ROOT_PASSWORD), MARIADB_DATABASE, on a server without networking; then mariadbd
# listening on every address.
set -euo pipefail
socket=/run/mysqld/mysqld.sock
if [ "$1" = mariadbd ] && [ ! -d /var/lib/mysql/mysql ]; then
  if [ -z "${MARIADB_ROOT_PASSWORD:-}" ] && [ -z "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}" ]; then
    echo 'Give MARIADB_ROOT_PASSWORD, or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1' >&2
    exit 1
  fi
  mariadb-install-db --datadir=/var/lib/mysql --skip-test-db --auth-root-authentication-method=normal \
    --cross-bootstrap >/dev/null
  mariadbd --skip-networking --socket="$socket" &
  pid=$!
  for _ in $(seq 1 60); do mariadb-admin --socket="$socket" ping >/dev/null 2>&1 && break; sleep 0.5; done
  password=${MARIADB_ROOT_PASSWORD:-}
  mariadb --socket="$socket" -uroot <<SQL
SET @@SESSION.SQL_LOG_BIN=0;
CREATE USER 'root'@'%' IDENTIFIED BY '${password//\'/\'\'}';
GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
ALTER USER 'root'@'localhost' IDENTIFIED BY '${password//\'/\'\'}';
${MARIADB_DATABASE:+CREATE DATABASE IF NOT EXISTS \`${MARIADB_DATABASE}\`;}
SQL
  kill "$pid"
  wait "$pid" || true
  echo 'MariaDB init process done. Ready for start up.'
fi
if [ "$1" = mariadbd ]; then
  shift
  exec mariadbd --bind-address=0.0.0.0 --socket="$socket" "$@"
fi
exec "$@"
