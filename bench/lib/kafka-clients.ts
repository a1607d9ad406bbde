import {
  compatibilityPartitioner,
  Consumer as PlatformaticConsumer,
  Producer as PlatformaticProducer,
} from '@platformatic/kafka';
import { Consumer, Partitioners, Producer } from 'kafkajs';
import { WireMessage } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../tools/infra/env';
import { benchKafka } from './brokers';
import { now, within } from './time';

/** The Kafka clients side by side in figure 9. */
export type KafkaClientName = 'kafkajs' | 'platformatic';

/** An idempotent producer (acks=all): `send` resolves once the broker confirmed the whole batch. */
export interface BatchProducer {
  send(batch: readonly WireMessage[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Reads `topic` from its start in a new group (offsets committed by the client after delivery, every
 * second) until `count` messages arrived; resolves with the ms between the first and the last arrival.
 */
export type ReadAll = (topic: string, group: string, count: number) => Promise<number>;

export async function batchProducer(client: KafkaClientName): Promise<BatchProducer> {
  return client === 'kafkajs' ? kafkajsProducer() : platformaticProducer();
}

export function readAll(client: KafkaClientName): ReadAll {
  return client === 'kafkajs' ? kafkajsReadAll : platformaticReadAll;
}

/** kafkajs, as the library's producer: idempotent, one request in flight, acks=-1. */
async function kafkajsProducer(): Promise<BatchProducer> {
  const producer: Producer = benchKafka('bench-client-kafkajs').producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  return {
    async send(batch) {
      if (batch.length === 0) return;
      await producer.send({
        topic: batch[0].destination,
        acks: -1,
        messages: batch.map((m) => ({ key: m.key, value: m.body, headers: { ...m.headers } })),
      });
    },
    close: () => producer.disconnect(),
  };
}

/**
 * @platformatic/kafka with the same guarantee: idempotent (which needs acks=all), one batch at a time,
 * topics not created on the fly. Its `compatibilityPartitioner` hashes keys as kafkajs' default and the Java
 * client do (its default partitioner differs), so a key lands on the same partition with either.
 */
async function platformaticProducer(): Promise<BatchProducer> {
  const producer = new PlatformaticProducer<string, Buffer, string, string>({
    clientId: 'bench-client-platformatic',
    bootstrapBrokers: infraEnv().kafkaBrokers,
    idempotent: true,
    acks: -1,
    autocreateTopics: false,
    partitioner: compatibilityPartitioner,
    serializers: {
      key: (k?: string) => (k === undefined ? undefined : Buffer.from(k)),
      value: (v?: Buffer) => v,
      headerKey: (k?: string) => (k === undefined ? undefined : Buffer.from(k)),
      headerValue: (v?: string) => (v === undefined ? undefined : Buffer.from(v)),
    },
  });
  return {
    async send(batch) {
      if (batch.length === 0) return;
      await producer.send({
        messages: batch.map((m) => ({
          topic: m.destination,
          key: m.key ?? undefined,
          value: m.body,
          headers: { ...m.headers },
        })),
      });
    },
    close: () => producer.close(),
  };
}

const kafkajsReadAll: ReadAll = async (topic, group, count) => {
  const consumer: Consumer = benchKafka('bench-client-kafkajs').consumer({ groupId: group });
  const arrivals = new Arrivals(count);
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommitInterval: 1_000,
      partitionsConsumedConcurrently: 3,
      eachMessage: async () => arrivals.arrived(),
    });
    return await arrivals.done(`kafkajs reading ${count} messages`);
  } finally {
    await consumer.disconnect();
  }
};

const platformaticReadAll: ReadAll = async (topic, group, count) => {
  const consumer = new PlatformaticConsumer({
    clientId: 'bench-client-platformatic',
    groupId: group,
    bootstrapBrokers: infraEnv().kafkaBrokers,
  });
  const arrivals = new Arrivals(count);
  try {
    const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: 1_000 });
    stream.on('data', () => arrivals.arrived());
    const ms = await arrivals.done(`@platformatic/kafka reading ${count} messages`);
    await stream.close();
    return ms;
  } finally {
    await new Promise<void>((resolve, reject) =>
      consumer.close(true, (error) => (error ? reject(error) : resolve())),
    );
  }
};

/** Counts arrivals; `done()` resolves with the ms from the first to the last once all arrived. */
class Arrivals {
  private seen = 0;
  private first = 0;
  private resolve: (ms: number) => void = () => undefined;
  private readonly all = new Promise<number>((resolve) => (this.resolve = resolve));

  constructor(private readonly count: number) {}

  arrived(): void {
    if (this.seen === 0) this.first = now();
    this.seen += 1;
    if (this.seen === this.count) this.resolve(now() - this.first);
  }

  done(what: string): Promise<number> {
    return within(this.all, 120_000 + this.count * 5, what);
  }
}
