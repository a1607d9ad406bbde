import { RedriveRefusedError } from './redrive-refused.error';

const NAMES = { kafka: 'Kafka', rabbitmq: 'RabbitMQ', postgres: 'the admin database' } as const;

/**
 * An admin command would log in to Kafka without SASL, or send a password in clear text (SASL `plain`
 * without TLS), or runs in local development (`--local-plaintext`) against a broker that is not on this
 * machine. Configure `MESSAGING_ADMIN_KAFKA_SASL` (scram-sha-512, or plain with
 * `MESSAGING_ADMIN_KAFKA_SSL=true`); only a broker on a loopback address may be reached without, and only
 * with the explicit `--local-plaintext` flag. A broker or admin database that is not on this machine is
 * reached over TLS (`amqps://`, `MESSAGING_ADMIN_KAFKA_SSL=true`, `sslmode=require`) unless
 * `--insecure-transport` (`MESSAGING_ADMIN_INSECURE_TRANSPORT=true`) accepts clear text.
 */
export class InsecureAdminConnectionError extends RedriveRefusedError {
  /** The guard that refused: always `INSECURE_CONNECTION`. */
  readonly guard = 'INSECURE_CONNECTION' as const;

  constructor(
    /** What is insecure, e.g. `no SASL mechanism is configured`. */
    readonly reason: string,
    /** The broker (or the admin database) it is about: the advice differs. Default `kafka`. */
    readonly transport: 'kafka' | 'rabbitmq' | 'postgres' = 'kafka',
    /** What to do instead, when it is not the default advice of `transport` (local development, SASL). */
    advice?: string,
  ) {
    super(
      advice !== undefined
        ? `Refused to connect to ${NAMES[transport]} as the admin: ${reason}. ${advice}`
        : transport === 'rabbitmq'
          ? `Refused to connect to RabbitMQ as the admin: ${reason}. Local development is for a broker on ` +
            'this machine; for any other, leave --local-plaintext (and MESSAGING_ADMIN_LOCAL_PLAINTEXT) out ' +
            'and give the admin user in MESSAGING_ADMIN_PRINCIPAL and MESSAGING_ADMIN_PASSWORD, with a ' +
            'keyring of version 2 (the identity map) in MESSAGING_ADMIN_APPROVERS.'
          : `Refused to connect to Kafka as the admin: ${reason}. Use SASL (MESSAGING_ADMIN_KAFKA_SASL=` +
            'scram-sha-512, or plain together with MESSAGING_ADMIN_KAFKA_SSL=true) without ' +
            '--local-plaintext; --local-plaintext is for a broker on this machine only.',
    );
    this.name = 'InsecureAdminConnectionError';
  }
}
