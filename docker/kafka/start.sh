#!/bin/bash
# The compose file's Kafka: one KRaft node with SASL/SCRAM on the client listeners and StandardAuthorizer ACLs,
# configured like the test suite's private broker (tools/infra/kafka-broker.ts). The SCRAM users are made when
# the storage is formatted (first start only); their passwords come from the environment.
set -euo pipefail
CONFIG=/tmp/server.properties
jaas() { echo "org.apache.kafka.common.security.$1 required username=\"broker\" password=\"${KAFKA_BROKER_PASSWORD}\""; }
cat > "$CONFIG" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@kafka:9093
controller.listener.names=CONTROLLER
listeners=EXTERNAL://:9092,INTERNAL://:29092,CONTROLLER://:9093
advertised.listeners=EXTERNAL://127.0.0.1:${KAFKA_EXTERNAL_PORT:-9092},INTERNAL://kafka:29092
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT,EXTERNAL:SASL_PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.internal.scram-sha-512.sasl.jaas.config=$(jaas scram.ScramLoginModule);
listener.name.external.scram-sha-512.sasl.jaas.config=$(jaas scram.ScramLoginModule);
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=$(jaas plain.PlainLoginModule) user_broker="${KAFKA_BROKER_PASSWORD}";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:broker;User:ops_admin
allow.everyone.if.no.acl.found=false
log.dirs=/var/lib/kafka/data
num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
PROPERTIES
scram() { echo "SCRAM-SHA-512=[name=$1,password=$2]"; }
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "${KAFKA_CLUSTER_ID}" -c "$CONFIG" \
  --add-scram "$(scram broker "${KAFKA_BROKER_PASSWORD}")" \
  --add-scram "$(scram ops_admin "${OPS_ADMIN_PASSWORD}")" \
  --add-scram "$(scram post-service "${POST_SERVICE_PASSWORD}")" \
  --add-scram "$(scram subscribe-service "${SUBSCRIBE_SERVICE_PASSWORD}")"
exec /opt/kafka/bin/kafka-server-start.sh "$CONFIG"
