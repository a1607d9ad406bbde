#!/bin/bash
# One-shot, as the admin: the services' Kafka ACLs, with the recipe of docs/guide/08-redrive.md.
set -euo pipefail
cat > /tmp/admin.properties <<PROPERTIES
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="ops_admin" password="${OPS_ADMIN_PASSWORD}";
PROPERTIES
acl() { /opt/kafka/bin/kafka-acls.sh --bootstrap-server kafka:29092 --command-config /tmp/admin.properties --add "$@"; }
acl --allow-principal User:post-service --operation Write --operation Describe --topic post-create
acl --allow-principal User:subscribe-service --operation Read --operation Describe --topic post-create
acl --allow-principal User:subscribe-service --operation Read --group subscribe-service
acl --allow-principal User:subscribe-service --operation Write --operation Describe \
  --topic post-create.subscribe-service.dlq
acl --deny-principal User:subscribe-service --operation Read --topic post-create.subscribe-service.dlq
