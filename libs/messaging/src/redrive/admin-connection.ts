import { isIPv4, isIPv6 } from 'node:net';
import { InsecureAdminConnectionError } from './errors/insecure-admin-connection.error';

/**
 * The admin identity a redrive runs as. The application runtime never holds it: with RabbitMQ it is a user
 * allowed to read dead-letter queues (the services' users are not); with Kafka, the admin principal the
 * broker's ACLs let read `*.dlq` topics. It signs nothing: approvals are signed by approvers' own keys.
 */
export interface AdminCredential {
  /** The admin user or principal name: the executor of a redrive, who may not approve it. */
  readonly principal: string;
  /** Its password. Never logged, never written to a plan, an approval or the audit log. */
  readonly secret: string;
}

/** Where the RabbitMQ broker is. The URL's user and password, if any, are replaced by the admin credential. */
export interface RabbitMqRedriveBroker {
  /** Tells a RabbitMQ broker from a Kafka one. */
  readonly kind: 'rabbitmq';
  /** AMQP URL with the virtual host, e.g. `amqp://127.0.0.1:5672/orders`. */
  readonly url: string;
  /**
   * Local development: a broker on this machine (a loopback host, refused otherwise), where four eyes may
   * go without an identity map (names are compared as they are). Default false.
   */
  readonly allowPlaintextLocal?: boolean;
}

/** Where the Kafka cluster is and how the admin principal logs in. */
export interface KafkaRedriveBroker {
  /** Tells a Kafka cluster from a RabbitMQ broker. */
  readonly kind: 'kafka';
  /** Bootstrap brokers, e.g. `['127.0.0.1:9092']`. */
  readonly brokers: readonly string[];
  /**
   * SASL mechanism the credential logs in with. Required, unless `allowPlaintextLocal` (a broker without
   * SASL on this machine); `plain` only with `ssl`.
   */
  readonly sasl?: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  /** Use TLS. Default false. */
  readonly ssl?: boolean;
  /**
   * Local development: allow a broker without SASL, on a loopback address only (nothing checks the
   * credential, so its password may be left out), where four eyes may go without an identity map (names
   * are compared as they are). Default false: an admin command without SASL is refused.
   */
  readonly allowPlaintextLocal?: boolean;
}

/** The broker a `RedriveService` works on. */
export type RedriveBroker = RabbitMqRedriveBroker | KafkaRedriveBroker;

/**
 * True for a host on this machine: `localhost`, an IPv4 address in 127.0.0.0/8 or the IPv6 loopback `::1`
 * (bracketed or not, in any spelling). Nothing else, not even a name that resolves to a loopback address.
 */
function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  if (isIPv4(bare)) return bare.split('.')[0] === '127';
  if (!isIPv6(bare)) return false;
  try {
    return new URL(`http://[${bare}]/`).hostname === '[::1]';
  } catch {
    return false;
  }
}

/** A Kafka bootstrap address `host:port` (`[v6]:port`) is on this machine. */
function isLoopbackBroker(address: string): boolean {
  const at = address.lastIndexOf(':');
  if (at < 1 || !/^\d+$/.test(address.slice(at + 1))) return false;
  return isLoopbackHost(address.slice(0, at));
}

/**
 * Refuses an admin connection that would expose or not use its credential: Kafka without SASL (unless
 * `allowPlaintextLocal`), or SASL `plain` without TLS; and local development (`allowPlaintextLocal`) on a
 * broker that is not on this machine (a loopback address: 127.0.0.0/8, ::1, localhost), whatever the SASL
 * setting: local mode turns off the identity map, so it never reaches a real cluster.
 */
export function checkAdminConnection(broker: RedriveBroker): void {
  if (broker.kind !== 'kafka') {
    if (broker.allowPlaintextLocal && !isLoopbackHost(hostOf(broker.url))) {
      throw new InsecureAdminConnectionError(
        '--local-plaintext allows a broker on this machine only (127.0.0.0/8, ::1, localhost), not the host ' +
          'of the AMQP URL',
        'rabbitmq',
      );
    }
    return;
  }
  if (broker.allowPlaintextLocal) {
    const remote = broker.brokers.filter((b) => !isLoopbackBroker(b));
    if (remote.length > 0) {
      throw new InsecureAdminConnectionError(
        `--local-plaintext allows brokers on this machine only (127.0.0.0/8, ::1, localhost), not ` +
          `${remote.join(', ')}${broker.sasl ? ', with SASL or without' : ''}`,
      );
    }
  }
  if (broker.sasl === 'plain' && !broker.ssl) {
    throw new InsecureAdminConnectionError('SASL plain would send the password in clear text without TLS');
  }
  if (broker.sasl) return;
  if (!broker.allowPlaintextLocal) {
    throw new InsecureAdminConnectionError('no SASL mechanism is configured');
  }
}

/** The host of an AMQP URL ('' when it does not parse): never echoed, it may carry a password. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
