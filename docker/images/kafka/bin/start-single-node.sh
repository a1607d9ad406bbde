#!/bin/bash
# One plaintext KRaft node (broker and controller) on 9092, advertised as KAFKA_ADVERTISED_LISTENERS
# (default PLAINTEXT://localhost:9092), its data in /var/lib/kafka/data.
set -euo pipefail
config=/tmp/server.properties
cat >"$config" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:9093
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=${KAFKA_ADVERTISED_LISTENERS:-PLAINTEXT://localhost:9092}
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=/var/lib/kafka/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
${KAFKA_EXTRA_PROPERTIES:-}
PROPERTIES
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "${KAFKA_CLUSTER_ID:-MjOuEj1U9Ho_6Hj246v7ew}" -c "$config"
exec /opt/kafka/bin/kafka-server-start.sh "$config"
