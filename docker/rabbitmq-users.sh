#!/bin/sh
# One-shot, as the admin: the services' RabbitMQ users, with the recipe of docs/guide/08-redrive.md (management API).
# configure nothing; write only the exchanges they publish to and their groups' failure exchanges (retry and
# dead-letter copies), never the default exchange (it reaches every queue); read only their work queues.
set -eu
# The management listener opens a little after the node answers its health check, and the compose network's
# name server can answer "rabbitmq" with nothing for a moment while other containers join it: retry until it
# does, whatever the error (these PUTs set the same thing again).
api() { curl -fsS --retry 60 --retry-delay 1 --retry-all-errors -u "ops_admin:${OPS_ADMIN_PASSWORD}" -H 'content-type: application/json' -X PUT "http://rabbitmq:15672/api/$1" -d "$2"; }
api users/post_service "{\"password\":\"${POST_SERVICE_PASSWORD}\",\"tags\":\"\"}"
api users/subscribe_service "{\"password\":\"${SUBSCRIBE_SERVICE_PASSWORD}\",\"tags\":\"\"}"
api permissions/%2F/post_service '{"configure":"^$","write":"^post-create$","read":"^$"}'
api permissions/%2F/subscribe_service '{"configure":"^$","write":"^post-create\\.subscribe-service\\.failures$","read":"^post-create\\.subscribe-service$"}'
