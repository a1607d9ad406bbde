import { AdminCredential, KafkaRedriveBroker, RedriveBroker } from '../dead-letter/redrive/admin-connection';
import { CliUsageError } from './cli-usage.error';

/**
 * Environment variables of the admin CLI. Deliberately not the application's (`AMQP_URL`, `KAFKA_BROKERS`):
 * the CLI never falls back to the runtime's credential.
 */
export const AdminEnv = {
  TRANSPORT: 'MESSAGING_ADMIN_TRANSPORT',
  /** The broker, and optionally the admin user: `amqp://admin:secret@host:5672/vhost`. */
  AMQP_URL: 'MESSAGING_ADMIN_AMQP_URL',
  KAFKA_BROKERS: 'MESSAGING_ADMIN_KAFKA_BROKERS',
  /** `plain`, `scram-sha-256` or `scram-sha-512`; unset: no SASL. */
  KAFKA_SASL: 'MESSAGING_ADMIN_KAFKA_SASL',
  KAFKA_SSL: 'MESSAGING_ADMIN_KAFKA_SSL',
  PRINCIPAL: 'MESSAGING_ADMIN_PRINCIPAL',
  /** The admin secret; only from the environment (a flag would show in `ps` and shell history). */
  TOKEN: 'MESSAGING_ADMIN_TOKEN',
} as const;

/** Broker flags every `nest-messaging dlq` command takes. */
export interface BrokerFlags {
  readonly transport?: string;
  readonly amqpUrl?: string;
  readonly kafkaBrokers?: string;
  readonly kafkaSasl?: string;
  readonly kafkaSsl?: boolean;
  readonly principal?: string;
}

const SASL = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/** The broker and admin credential from flags, then the environment. The credential may be missing. */
export function resolveAdminOptions(
  flags: BrokerFlags,
  env: Readonly<Record<string, string | undefined>>,
): { broker: RedriveBroker; credential: AdminCredential | undefined } {
  const amqpUrl = flags.amqpUrl ?? env[AdminEnv.AMQP_URL];
  const kafkaBrokers = flags.kafkaBrokers ?? env[AdminEnv.KAFKA_BROKERS];
  const transport =
    flags.transport ?? env[AdminEnv.TRANSPORT] ?? (amqpUrl ? 'rabbitmq' : kafkaBrokers ? 'kafka' : '');
  const fromUrl = transport === 'rabbitmq' && amqpUrl ? userOf(amqpUrl) : {};
  const principal = flags.principal ?? env[AdminEnv.PRINCIPAL] ?? fromUrl.principal;
  const secret = env[AdminEnv.TOKEN] ?? fromUrl.secret;
  const credential = principal && secret ? { principal, secret } : undefined;
  if (transport === 'rabbitmq') {
    if (!amqpUrl) throw new CliUsageError(`Give the RabbitMQ URL: --amqp-url or ${AdminEnv.AMQP_URL}.`);
    return { broker: { kind: 'rabbitmq', url: amqpUrl }, credential };
  }
  if (transport === 'kafka') {
    const brokers = (kafkaBrokers ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    if (brokers.length === 0) {
      throw new CliUsageError(`Give the Kafka brokers: --kafka-brokers or ${AdminEnv.KAFKA_BROKERS}.`);
    }
    return { broker: kafkaBroker(brokers, flags, env), credential };
  }
  throw new CliUsageError(
    `Say which broker: ${AdminEnv.AMQP_URL} (RabbitMQ) or ${AdminEnv.KAFKA_BROKERS} (Kafka), or --transport.`,
  );
}

function kafkaBroker(
  brokers: string[],
  flags: BrokerFlags,
  env: Readonly<Record<string, string | undefined>>,
): KafkaRedriveBroker {
  const sasl = flags.kafkaSasl ?? env[AdminEnv.KAFKA_SASL];
  if (sasl !== undefined && !SASL.includes(sasl as (typeof SASL)[number])) {
    throw new CliUsageError(`Unknown SASL mechanism '${sasl}'; use one of ${SASL.join(', ')}.`);
  }
  const ssl = flags.kafkaSsl ?? env[AdminEnv.KAFKA_SSL] === 'true';
  return { kind: 'kafka', brokers, sasl: sasl as KafkaRedriveBroker['sasl'], ssl };
}

function userOf(url: string): { principal?: string; secret?: string } {
  try {
    const parsed = new URL(url);
    return {
      principal: parsed.username ? decodeURIComponent(parsed.username) : undefined,
      secret: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    };
  } catch {
    throw new CliUsageError(`'${url}' is not a URL.`);
  }
}
