import { Kafka, logLevel, SASLOptions } from 'kafkajs';
import { kafkaLogCreator } from '../../../transports/kafka/kafka-logger';
import { AdminCredential, KafkaRedriveBroker } from '../admin-connection';

/** A kafkajs client that logs in as the admin principal (SASL when the broker asks for it). */
export function kafkaAdminClient(broker: KafkaRedriveBroker, credential: AdminCredential): Kafka {
  return new Kafka({
    clientId: `messaging-redrive-${credential.principal}`,
    brokers: [...broker.brokers],
    ssl: broker.ssl ?? false,
    sasl: saslOf(broker, credential),
    connectionTimeout: 5_000,
    requestTimeout: 10_000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 },
    logLevel: logLevel.ERROR,
    logCreator: kafkaLogCreator('MessagingRedrive'),
  });
}

function saslOf(broker: KafkaRedriveBroker, credential: AdminCredential): SASLOptions | undefined {
  const { principal: username, secret: password } = credential;
  switch (broker.sasl) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
    default:
      return undefined;
  }
}
