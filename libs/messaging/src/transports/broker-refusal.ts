/**
 * A broker's answer that no retry will change: a login refused, a virtual host that is not there, an address
 * that answers but is not a Kafka client listener. The transports keep retrying (someone may fix the broker
 * side), but they say it once as an error naming the option to fix, and the health check carries it, instead
 * of logging it as one more outage.
 */
export interface BrokerRefusal {
  /** The option to fix, e.g. `transport.url`. */
  readonly setting: string;
  /** What the broker said, for people: why it will not heal by itself. */
  readonly reason: string;
}

/** The permanent refusal in `error` (or in an error it wraps), if it is one. */
export function brokerRefusal(kind: 'kafka' | 'rabbitmq', error: unknown): BrokerRefusal | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; depth += 1) {
    const refusal = kind === 'rabbitmq' ? rabbitRefusal(e) : kafkaRefusal(e);
    if (refusal) return refusal;
    const { cause, originalError } = e as Error & { originalError?: unknown };
    e = originalError ?? cause;
  }
  return undefined;
}

/** One line for the log and the health check. */
export function describeRefusal(refusal: BrokerRefusal): string {
  return `${refusal.reason}. Retrying will not help: fix ${refusal.setting}.`;
}

function rabbitRefusal(error: Error): BrokerRefusal | undefined {
  // amqplib reports both only in the message text.
  if (/^Handshake terminated by server: 403\b/.test(error.message)) {
    return {
      setting: 'transport.url',
      reason:
        'RabbitMQ refused the login (ACCESS_REFUSED): the user or password in the URL is wrong, or the user may not log in',
    };
  }
  if (/^Expected ConnectionOpenOk; got <ConnectionClose/.test(error.message)) {
    return {
      setting: 'transport.url',
      reason:
        "RabbitMQ refused to open the URL's virtual host (NOT_ALLOWED): it does not exist, or the user has no permission on it",
    };
  }
  return undefined;
}

function kafkaRefusal(error: Error): BrokerRefusal | undefined {
  const { type } = error as Error & { type?: unknown };
  if (error.name === 'KafkaJSServerDoesNotSupportApiKey') {
    return {
      setting: 'transport.brokers',
      reason:
        'An address in transport.brokers answers, but not as a Kafka client listener (a KRaft controller port, or another service?)',
    };
  }
  if (error.name === 'KafkaJSSASLAuthenticationError') {
    return {
      setting: 'transport.sasl',
      reason: 'Kafka refused the SASL login: wrong user, password or mechanism',
    };
  }
  if (type === 'ILLEGAL_SASL_STATE' || type === 'UNSUPPORTED_SASL_MECHANISM') {
    return {
      setting: 'transport.sasl',
      reason: `Kafka does not take this SASL login on this listener (${type}): SASL given for a listener without it, or a mechanism the broker does not enable`,
    };
  }
  return undefined;
}

/**
 * Says each permanent refusal once, as an error (the outage log keeps the transient failures quiet), and
 * remembers the last one for the health check until the broker is reached again.
 */
export class RefusalLog {
  private last?: BrokerRefusal;

  constructor(
    private readonly kind: 'kafka' | 'rabbitmq',
    private readonly logger: { error(message: string): void },
  ) {}

  /** The refusal in `error`, if it is one; logged when it differs from the last one. */
  failure(error: unknown): BrokerRefusal | undefined {
    const refusal = brokerRefusal(this.kind, error);
    if (refusal && refusal.reason !== this.last?.reason) this.logger.error(describeRefusal(refusal));
    if (refusal) this.last = refusal;
    return refusal;
  }

  /** The broker was reached: whatever was refused before works now. */
  recovered(): void {
    this.last = undefined;
  }

  /** The refusal still standing, for the health check. */
  get current(): BrokerRefusal | undefined {
    return this.last;
  }
}
