import type * as Platformatic from '@platformatic/kafka';
import { requirePeer } from '../../common/optional-peer';
import { WireMessage } from '../../envelope/wire-message';
import { KafkaSaslOptions } from '../../messaging-options.interface';
import { CONFIRMED, PublishOutcome } from '../publish-outcome';
import { IdempotentSends } from './idempotent-sends';
import { KafkaPublisher } from './kafka-publisher';

type PlatformaticKafka = typeof Platformatic;
type Producer = Platformatic.Producer<string, Buffer, string, string>;

/** What the @platformatic/kafka producer is built from (the Kafka transport's settings). */
export interface PlatformaticPublisherSettings {
  readonly clientId: string;
  readonly brokers: readonly string[];
  readonly sasl?: KafkaSaslOptions;
  readonly ssl?: boolean;
  readonly connectionTimeoutMs: number;
}

/** The same retries as the kafkajs producer's: 3, from 100 ms, doubling, at most 2 s. */
const RETRIES = 3;
const retryDelay = (_client: unknown, _operation: string, attempt: number): number =>
  Math.min(100 * 2 ** Math.max(0, attempt - 1), 2_000);

const SASL_MECHANISMS = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
} as const;

/**
 * Publishes with @platformatic/kafka (`transport.producerClient: 'platformatic'`): an idempotent producer,
 * acks=all, keys partitioned as kafkajs and the Java client partition them (murmur2), so that a key stays on
 * its partition when a service changes client.
 *
 * Sends go out one at a time. The producer numbers a partition's batches when it sends one and counts them
 * once the broker answered, so two sends on their way together would carry the same sequence numbers and the
 * broker would take the second for a retry of the first: a confirmed batch that was never written. For the
 * same reason a send that failed leaves its numbers to the next one: after it, the producer is replaced
 * before the next send starts (`IdempotentSends`).
 */
export class PlatformaticPublisher implements KafkaPublisher {
  private readonly sends: IdempotentSends<Producer>;

  constructor(
    private readonly settings: PlatformaticPublisherSettings,
    private readonly kafka: PlatformaticKafka = requirePeer<PlatformaticKafka>('@platformatic/kafka'),
  ) {
    this.sends = new IdempotentSends({
      open: async () => {
        const producer = this.create();
        try {
          // A producer id from the cluster now (a send would get one on its first use).
          await producer.initIdempotentProducer({});
        } catch (error) {
          await closeProducer(producer);
          throw platformaticFailure(error).error;
        }
        return producer;
      },
      // Forced: requests still waiting for an answer fail rather than keep the old producer id alive.
      close: closeProducer,
      failure: platformaticFailure,
    });
  }

  connect(): Promise<void> {
    return this.sends.connect();
  }

  send(topic: string, messages: readonly WireMessage[], signal?: AbortSignal): Promise<PublishOutcome> {
    // One lane for every topic: one send at a time, as above.
    return this.sends.send('', (producer) => this.sendNow(producer, topic, messages), signal);
  }

  close(): Promise<void> {
    return this.sends.close();
  }

  private async sendNow(
    producer: Producer,
    topic: string,
    messages: readonly WireMessage[],
  ): Promise<PublishOutcome> {
    try {
      await producer.send({
        messages: messages.map((m) => ({
          topic,
          key: m.key ?? undefined,
          value: m.body,
          headers: m.headers,
        })),
      });
      return CONFIRMED;
    } catch (error) {
      return platformaticFailure(error);
    }
  }

  private create(): Producer {
    const { clientId, brokers, sasl, ssl, connectionTimeoutMs } = this.settings;
    const toBuffer = (text?: string) => (text === undefined ? undefined : Buffer.from(text));
    return new this.kafka.Producer<string, Buffer, string, string>({
      clientId,
      bootstrapBrokers: [...brokers],
      ...(ssl ? { tls: {} } : {}),
      ...(sasl
        ? {
            sasl: {
              mechanism: SASL_MECHANISMS[sasl.mechanism],
              username: sasl.username,
              password: sasl.password,
            },
          }
        : {}),
      connectTimeout: connectionTimeoutMs,
      requestTimeout: 10_000,
      retries: RETRIES,
      retryDelay,
      idempotent: true,
      acks: this.kafka.ProduceAcks.ALL,
      autocreateTopics: false,
      partitioner: this.kafka.compatibilityPartitioner,
      serializers: {
        key: toBuffer,
        value: (body?: Buffer) => body,
        headerKey: toBuffer,
        headerValue: toBuffer,
      },
    });
  }
}

function closeProducer(producer: Producer): Promise<void> {
  return new Promise<void>((resolve) => producer.close(true, () => resolve()));
}

/**
 * A send that failed: REJECTED when every error in it is a broker's refusal that cannot succeed on a retry
 * (too large, not authorised: nothing was written) or a message the client could not serialise; AMBIGUOUS
 * otherwise (timeouts, dropped connections, retries exhausted), since the last attempt may have been written.
 */
export function platformaticFailure(error: unknown): Exclude<PublishOutcome, { status: 'CONFIRMED' }> {
  const e = error instanceof Error ? error : new Error(String(error));
  // The client's error says "Producing messages failed." and keeps the broker's answers inside it.
  const described = new Error(`${e.message} ${causes(e).join('; ')}`.trim(), { cause: e });
  return { status: refusals(e) ? 'REJECTED' : 'AMBIGUOUS', error: described };
}

/** The innermost errors' messages, each with the broker's error name where there is one. */
function causes(error: Error): string[] {
  const { apiId, errors } = error as Error & { apiId?: unknown; errors?: unknown };
  if (Array.isArray(errors) && errors.length > 0) {
    return [
      ...new Set(errors.flatMap((inner) => (inner instanceof Error ? causes(inner) : [String(inner)]))),
    ];
  }
  if (error.cause instanceof Error) return causes(error.cause);
  return [typeof apiId === 'string' ? `${apiId}: ${error.message}` : error.message];
}

/** Whether an error, and every error it gathers (`errors`) or wraps (`cause`), is a refusal. */
function refusals(error: Error): boolean {
  const { code, canRetry, errors } = error as Error & {
    code?: unknown;
    canRetry?: unknown;
    errors?: unknown;
  };
  if (Array.isArray(errors) && errors.length > 0) {
    return errors.every((inner) => inner instanceof Error && refusals(inner));
  }
  if (code === 'PLT_KFK_USER') return true;
  if (code === 'PLT_KFK_PROTOCOL') return canRetry === false;
  return error.cause instanceof Error ? refusals(error.cause) : false;
}
