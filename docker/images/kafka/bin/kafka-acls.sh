#!/bin/bash
# kafka-acls.sh --bootstrap-server ... --add|--list|--remove ...
KAFKA_LOG4J_CONFIG=/opt/kafka/config/tools-log4j2.properties \
  exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.AclCommand "$@"
