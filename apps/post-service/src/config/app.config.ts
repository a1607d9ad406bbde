import { readServiceEnvironment, ServiceEnvironment } from '@app/service-kit';

/**
 * post-service's configuration, read from the environment in this one place:
 * PORT (3000), HOST, DATABASE_URL (postgres://postgres@127.0.0.1:5432/post_service), DATABASE_SCHEMA,
 * MESSAGING_TRANSPORT (kafka | rabbitmq), KAFKA_BROKERS (127.0.0.1:9092), KAFKA_SESSION_TIMEOUT_MS, AMQP_URL
 * (amqp://guest:guest@127.0.0.1:5672), RELAY_LEASE_MS (the library's default), RELAY_MODE (poll | logical; the
 * library's default, poll).
 */
export type PostServiceConfig = ServiceEnvironment;

/** Reads and validates the environment; throws `InvalidEnvironmentError` naming every bad variable. */
export function loadPostServiceConfig(env: NodeJS.ProcessEnv = process.env): PostServiceConfig {
  return readServiceEnvironment(env, { serviceName: 'post-service', port: 3000, database: 'post_service' });
}
