import { RedriveRefusedError } from './redrive-refused.error';

/**
 * An admin command would log in to Kafka without SASL, or send a password in clear text (SASL `plain`
 * without TLS). Configure `MESSAGING_ADMIN_KAFKA_SASL` (scram-sha-512, or plain with
 * `MESSAGING_ADMIN_KAFKA_SSL=true`); only a broker on this machine may be reached without, and only with
 * the explicit `--local-plaintext` flag.
 */
export class InsecureAdminConnectionError extends RedriveRefusedError {
  /** The guard that refused: always `INSECURE_CONNECTION`. */
  readonly guard = 'INSECURE_CONNECTION' as const;

  constructor(
    /** What is insecure, e.g. `no SASL mechanism is configured`. */
    readonly reason: string,
  ) {
    super(
      `Refused to connect to Kafka as the admin: ${reason}. Use SASL (MESSAGING_ADMIN_KAFKA_SASL=` +
        'scram-sha-512, or plain together with MESSAGING_ADMIN_KAFKA_SSL=true); --local-plaintext allows a ' +
        'broker without SASL on this machine only.',
    );
    this.name = 'InsecureAdminConnectionError';
  }
}
