#!/bin/bash
# On the first start: initdb with POSTGRES_USER (default postgres) and POSTGRES_PASSWORD, password
# authentication from other hosts, POSTGRES_DB created, /docker-entrypoint-initdb.d/*.sql and *.sh run on a
# server that listens on the socket only; then PostgreSQL listening on every address.
set -euo pipefail
if [ "${1:0:1}" = - ]; then set -- postgres "$@"; fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required (the password of the superuser)}"
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") --auth-local=trust \
    --auth-host=scram-sha-256 >/dev/null
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  psql=(psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$user" --dbname postgres -q)
  if [ "$db" != postgres ]; then "${psql[@]}" -c "create database \"$db\""; fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sql) echo "running $f" && "${psql[@]}" --dbname "$db" -f "$f" ;;
      *.sh) echo "running $f" && . "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo 'PostgreSQL init process complete; ready for start up.'
fi
if [ "$1" = postgres ]; then
  shift
  exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
