#!/bin/bash
# Runs a class of the Kafka jars, as Kafka's own script of this name does (heap: KAFKA_HEAP_OPTS).
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx256m} ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20} \
  ${KAFKA_OPTS:-} "-Dlog4j2.configurationFile=${KAFKA_LOG4J_CONFIG:-/opt/kafka/config/log4j2.properties}" \
  -cp '/opt/kafka/libs/*' "$@"
