import * as amqp from 'amqplib';
import { ReadRecord, TopicReader } from '../../integration/support/topic-reader';
import { drainQueue } from '../../integration/support/rabbit-wire';
import { destinationNames } from 'nest-reliable-messaging/testing';
import { testKafka } from '../../harness/kafka';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';

/** One copy of a message as it was on the wire (a Kafka record, or a message routed to our queue). */
export interface WireCopy {
  readonly messageId: string;
  readonly key: string | null;
  readonly body: string;
  /** Kafka `partition:offset`; RabbitMQ the position in our queue. */
  readonly position: string;
}

/**
 * An independent raw consumer of the services' destination: it sees every copy the relays published, in
 * the broker's order, through none of the library's code.
 * - Kafka: after the run, a kafkajs consumer of a group of its own reads the topic from the beginning up to
 *   its end offsets (a record is counted once per partition and offset, however often it is read).
 * - RabbitMQ: from before the run, a durable queue of its own bound to the exchange with `#` keeps a copy of
 *   everything routed (a durable queue outlives `stop_app`); after the run it is drained.
 */
export interface WireWitness {
  /** Every copy published since `start()`, in order per key. */
  collect(): Promise<WireCopy[]>;
  stop(): Promise<void>;
}

/** Starts a witness of `destination` on the run's broker. */
export async function startWireWitness(
  transport: 'kafka' | 'rabbitmq',
  broker: { kafkaBrokers: readonly string[]; amqpUrl: string },
  destination: string,
): Promise<WireWitness> {
  return transport === 'kafka'
    ? kafkaWitness([...broker.kafkaBrokers], destination)
    : rabbitWitness(broker.amqpUrl, destination);
}

function kafkaWitness(brokers: string[], topic: string): WireWitness {
  const kafka = testKafka(brokers, 'faults-witness');
  let reader: TopicReader | undefined;
  return {
    async collect() {
      // Right after a failover a partition's leader may still be moving: kafkajs answers "not the leader"
      // until its metadata catches up, so the ends are read again until they come.
      const ends = await eventually(
        async () => {
          const admin = kafka.admin();
          await admin.connect();
          return admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
        },
        60_000,
        500,
      );
      const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
      reader = await new TopicReader(topic, kafka).start();
      await reader.waitFor(total, 120_000);
      const byPosition = new Map<string, ReadRecord>();
      for (const record of reader.records) byPosition.set(`${record.partition}:${record.offset}`, record);
      return [...byPosition.values()]
        .sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset))
        .map((r) => ({
          messageId: r.headers['msg.id'] ?? '',
          key: r.key,
          body: r.value,
          position: `${r.partition}:${r.offset}`,
        }));
    },
    async stop() {
      await reader?.stop().catch(() => undefined);
    },
  };
}

async function rabbitWitness(url: string, exchange: string): Promise<WireWitness> {
  const queue = uniqueName('faults_witness');
  const declare = async () => {
    const connection = await amqp.connect(url);
    try {
      const channel = await connection.createChannel();
      await channel.assertExchange(exchange, 'topic', { durable: true });
      await channel.assertQueue(queue, { durable: true });
      await channel.bindQueue(queue, exchange, '#');
    } finally {
      await connection.close().catch(() => undefined);
    }
  };
  await declare();
  return {
    async collect() {
      const connection = await amqp.connect(url);
      try {
        const messages = await drainQueue(connection, queue);
        return messages.map((m, i) => ({
          messageId: String(m.properties.headers?.['msg.id'] ?? m.properties.messageId ?? ''),
          key:
            m.properties.headers?.['msg.key'] === undefined ? null : String(m.properties.headers['msg.key']),
          body: m.content.toString('utf8'),
          position: String(i),
        }));
      } finally {
        await connection.close().catch(() => undefined);
      }
    },
    async stop() {
      const connection = await amqp.connect(url).catch(() => undefined);
      if (!connection) return;
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue).catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

/** Messages waiting in a group's dead-letter destination (Kafka: records in the topic; RabbitMQ: in the queue). */
export async function deadLetterCount(
  transport: 'kafka' | 'rabbitmq',
  broker: { kafkaBrokers: readonly string[]; amqpUrl: string },
  destination: string,
  group: string,
): Promise<number> {
  const dlq = destinationNames.deadLetter(destination, group);
  if (transport === 'kafka') {
    // After a failover the first answer can come from a broker that led a partition before ("This server is not
    // the leader for that topic-partition", a cluster run failed so): asked again, with fresh metadata, while
    // kafkajs calls the error retriable, up to 10 times 1 s apart.
    for (let attempt = 1; ; attempt++) {
      const admin = testKafka([...broker.kafkaBrokers], 'faults-dlq').admin();
      try {
        await admin.connect();
        if (!(await admin.listTopics()).includes(dlq)) return 0;
        const offsets = await admin.fetchTopicOffsets(dlq);
        return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      } catch (error) {
        if (attempt >= 10 || (error as { retriable?: unknown }).retriable !== true) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    }
  }
  const connection = await amqp.connect(broker.amqpUrl);
  try {
    const channel = await connection.createChannel();
    return (await channel.checkQueue(dlq)).messageCount;
  } finally {
    await connection.close().catch(() => undefined);
  }
}
