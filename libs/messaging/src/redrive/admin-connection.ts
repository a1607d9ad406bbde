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
  /**
   * Accept `amqp://` (no TLS) to a host that is not on this machine: the admin password and the messages
   * then cross the network in clear text (`--insecure-transport`). Default false: such a URL is refused.
   */
  readonly allowInsecureTransport?: boolean;
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
  /**
   * Accept a broker that is not on this machine without TLS: the SASL session and the dead letters then
   * cross the network in clear text (`--insecure-transport`). Default false: refused.
   */
  readonly allowInsecureTransport?: boolean;
}

/** The broker a `RedriveService` works on. */
export type RedriveBroker = RabbitMqRedriveBroker | KafkaRedriveBroker;

/**
 * True for a host on this machine: `localhost`, an IPv4 address in 127.0.0.0/8 or the IPv6 loopback `::1`
 * (bracketed or not, in any spelling). Nothing else, not even a name that resolves to a loopback address
 * (and not `0.0.0.0` or `::`, which listen on every interface).
 */
export function isLoopbackHost(host: string): boolean {
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
 * `allowPlaintextLocal`), or SASL `plain` without TLS; a broker not on this machine without TLS (`amqp://`,
 * Kafka without `ssl`) unless `allowInsecureTransport`; and local development (`allowPlaintextLocal`) on a
 * broker that is not on this machine (a loopback address: 127.0.0.0/8, ::1, localhost), whatever the SASL
 * setting: local mode turns off the identity map, so it never reaches a real cluster. Returns true when the
 * connection was accepted only because of `allowInsecureTransport` (the audit log records that override).
 */
export function checkAdminConnection(broker: RedriveBroker): boolean {
  if (broker.kind !== 'kafka') {
    if (broker.allowPlaintextLocal && !isLoopbackHost(hostOf(broker.url))) {
      throw new InsecureAdminConnectionError(
        '--local-plaintext allows a broker on this machine only (127.0.0.0/8, ::1, localhost), not the host ' +
          'of the AMQP URL',
        'rabbitmq',
      );
    }
    const cleartext = !isTlsAmqpUrl(broker.url) && !isLoopbackHost(hostOf(broker.url));
    if (cleartext && !broker.allowInsecureTransport) {
      throw new InsecureAdminConnectionError(
        'an amqp:// URL to a host that is not on this machine sends the admin password and the messages in ' +
          'clear text',
        'rabbitmq',
        TLS_ADVICE.rabbitmq,
      );
    }
    return cleartext;
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
  const remote = broker.brokers.filter((b) => !isLoopbackBroker(b));
  const cleartext = !broker.ssl && remote.length > 0;
  if (cleartext && !broker.allowInsecureTransport) {
    throw new InsecureAdminConnectionError(
      `without TLS the admin session and the dead letters cross the network in clear text to ${remote.join(', ')}`,
      'kafka',
      TLS_ADVICE.kafka,
    );
  }
  if (broker.sasl === 'plain' && !broker.ssl) {
    throw new InsecureAdminConnectionError('SASL plain would send the password in clear text without TLS');
  }
  if (!broker.sasl && !broker.allowPlaintextLocal) {
    throw new InsecureAdminConnectionError('no SASL mechanism is configured');
  }
  return cleartext;
}

/** What to do about a connection without TLS, per transport. */
const TLS_ADVICE = {
  rabbitmq:
    'Use an amqps:// URL; only where the network between this host and the broker is trusted, accept it ' +
    'with --insecure-transport (MESSAGING_ADMIN_INSECURE_TRANSPORT=true).',
  kafka:
    'Set MESSAGING_ADMIN_KAFKA_SSL=true (--kafka-ssl); only where the network between this host and the ' +
    'brokers is trusted, accept it with --insecure-transport (MESSAGING_ADMIN_INSECURE_TRANSPORT=true).',
  postgres:
    'Add sslmode=require (or verify-full) to MESSAGING_ADMIN_DATABASE_URL; only where the network between ' +
    'this host and the database is trusted, accept it with MESSAGING_ADMIN_INSECURE_TRANSPORT=true.',
} as const;

/**
 * Refuses an admin database URL that reaches a host not on this machine without TLS (`sslmode=require`,
 * `verify-ca`, `verify-full`, `no-verify`, or `ssl=true`), unless `allowInsecureTransport`: the everyday
 * login's password, the audit log and the plans would cross the network in clear text. A Unix socket
 * (no host, or a `host=/path` parameter) is on this machine. Returns true when the URL was accepted only
 * because of `allowInsecureTransport` (the audit log records that override, issue 45 finding 11).
 */
export function checkAdminDatabaseUrl(url: string, allowInsecureTransport = false): boolean {
  if (!isCleartextDatabaseUrl(url)) return false;
  if (allowInsecureTransport) return true;
  throw new InsecureAdminConnectionError(
    'the admin database URL reaches a host that is not on this machine without sslmode=require: its ' +
      'password, the audit log and the plans would travel in clear text',
    'postgres',
    TLS_ADVICE.postgres,
  );
}

/** A URL to a host not on this machine without TLS. */
function isCleartextDatabaseUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false; // The driver refuses it; nothing to send in clear text.
  }
  const socket = parsed.searchParams.get('host');
  const local =
    parsed.hostname === '' || isLoopbackHost(parsed.hostname) || (socket !== null && socket.startsWith('/'));
  if (local) return false;
  const sslmode = parsed.searchParams.get('sslmode')?.toLowerCase();
  const ssl = parsed.searchParams.get('ssl')?.toLowerCase();
  if (sslmode !== undefined) return !['require', 'verify-ca', 'verify-full', 'no-verify'].includes(sslmode);
  return ssl !== 'true' && ssl !== '1';
}

/** True for `amqps:` URLs (TLS). */
function isTlsAmqpUrl(url: string): boolean {
  try {
    return new URL(url).protocol === 'amqps:';
  } catch {
    return false;
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
