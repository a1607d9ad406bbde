#!/bin/bash
# The default user from RABBITMQ_DEFAULT_USER/PASS (default guest/guest), allowed from other hosts as in the
# official image; the log on standard output.
set -euo pipefail
cat >"$RABBITMQ_CONFIG_FILE" <<CONF
loopback_users = none
default_user = ${RABBITMQ_DEFAULT_USER:-guest}
default_pass = ${RABBITMQ_DEFAULT_PASS:-guest}
listeners.tcp.default = 5672
management.tcp.port = 15672
CONF
exec "$@"
