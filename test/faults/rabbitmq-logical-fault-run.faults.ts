import { faultRunSuite } from './support/fault-run-suite';

// Issue 38: the fault run with post-service's logical relay over RabbitMQ too (the Kafka one is
// kafka-logical-fault-run): kills of the reader, subscribe-service mid-batch, the broker stopped, PostgreSQL
// restarted, publisher confirms answered per message.
faultRunSuite('rabbitmq', 'postgres', { relay: 'logical' });
