import { Kafka, logLevel } from 'kafkajs';
import { kafkaLogCreator } from '../../transports/kafka/kafka-logger';
import { kafkaSasl } from '../../transports/kafka/kafka-sasl';
import { AdminCredential, KafkaRedriveBroker } from '../admin-connection';

/** A kafkajs client that logs in as the admin principal (SASL when the broker asks for it). */
export function kafkaAdminClient(broker: KafkaRedriveBroker, credential: AdminCredential): Kafka {
  return new Kafka({
    clientId: `messaging-redrive-${credential.principal}`,
    brokers: [...broker.brokers],
    ssl: broker.ssl ?? false,
    sasl: kafkaSasl(
      broker.sasl && { mechanism: broker.sasl, username: credential.principal, password: credential.secret },
    ),
    connectionTimeout: 5_000,
    requestTimeout: 10_000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 },
    logLevel: logLevel.ERROR,
    logCreator: kafkaLogCreator('MessagingRedrive'),
  });
}
