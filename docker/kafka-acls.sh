#!/bin/bash
# One-shot, as the admin: the services' Kafka ACLs, with the recipe of docs/guide/08-redrive.md.
set -euo pipefail
cat > /tmp/admin.properties <<PROPERTIES
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="ops_admin" password="${OPS_ADMIN_PASSWORD}";
PROPERTIES
# Each one tried again, up to 30 times 2 s apart, when it fails: the compose network's name server can answer
# "kafka" with nothing for a moment while other containers join it (a CI run had the second call fail so, "No
# resolvable bootstrap urls given in bootstrap.servers", and the stack did not come up). Adding an ACL that
# exists already changes nothing.
acl() {
  local try
  for try in $(seq 1 30); do
    /opt/kafka/bin/kafka-acls.sh --bootstrap-server kafka:29092 --command-config /tmp/admin.properties --add "$@" &&
      return 0
    echo "kafka-acls: try ${try} of 30 failed, again in 2 s" >&2
    sleep 2
  done
  return 1
}
acl --allow-principal User:post-service --operation Write --operation Describe --topic post-create
acl --allow-principal User:subscribe-service --operation Read --operation Describe --topic post-create
acl --allow-principal User:subscribe-service --operation Read --group subscribe-service
acl --allow-principal User:subscribe-service --operation Write --operation Describe \
  --topic post-create.subscribe-service.dlq
acl --deny-principal User:subscribe-service --operation Read --topic post-create.subscribe-service.dlq
