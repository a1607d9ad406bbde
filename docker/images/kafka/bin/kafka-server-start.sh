#!/bin/bash
# kafka-server-start.sh CONFIG: the broker (heap 512 MB unless KAFKA_HEAP_OPTS says otherwise).
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms512m -Xmx512m}
exec "$(dirname "$0")/kafka-run-class.sh" kafka.Kafka "$@"
