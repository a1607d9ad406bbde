import { readServiceEnvironment, ServiceEnvironment } from '@app/service-kit';

/**
 * subscribe-service's configuration, read from the environment in this one place:
 * PORT (3001), HOST, DATABASE_URL (postgres://postgres@127.0.0.1:5432/subscribe_service), DATABASE_SCHEMA,
 * MESSAGING_TRANSPORT (kafka | rabbitmq), KAFKA_BROKERS (127.0.0.1:9092), KAFKA_SESSION_TIMEOUT_MS, AMQP_URL
 * (amqp://guest:guest@127.0.0.1:5672).
 */
export type SubscribeServiceConfig = ServiceEnvironment;

/** Reads and validates the environment; throws `InvalidEnvironmentError` naming every bad variable. */
export function loadSubscribeServiceConfig(env: NodeJS.ProcessEnv = process.env): SubscribeServiceConfig {
  return readServiceEnvironment(env, {
    serviceName: 'subscribe-service',
    port: 3001,
    database: 'subscribe_service',
  });
}
