import { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { uniqueName } from '../../harness/names';
import { testKafka } from '../../harness/kafka';

/** A received Kafka record, with its headers as strings. */
export interface ReadRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly value: string;
  readonly headers: Record<string, string>;
}

/** Reads a topic from the beginning with a raw kafkajs consumer of its own group: an independent witness. */
export class TopicReader {
  readonly records: ReadRecord[] = [];
  private consumer?: Consumer;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly topic: string,
    private readonly kafka: Kafka = testKafka(),
  ) {}

  async start(): Promise<this> {
    this.consumer = this.kafka.consumer({ groupId: uniqueName('reader'), maxWaitTimeInMs: 100 });
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await this.consumer.run({
      eachMessage: async ({ partition, message }) => {
        this.records.push(toRecord(partition, message));
        this.waiters.forEach((w) => w());
      },
    });
    return this;
  }

  /** Resolves once at least `count` records arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<ReadRecord[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.records.length < count) {
      if (Date.now() > deadline)
        throw new Error(`Only ${this.records.length} of ${count} records on ${this.topic}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
      this.waiters = [];
    }
    return this.records;
  }

  /**
   * Waits until the reader has read every record the topic holds now (each partition up to the end offset
   * the broker reports): everything confirmed before the call, duplicates included, so that a test can
   * count them without waiting for a quiet period. (Our producers write no transaction markers: offsets
   * are contiguous.)
   */
  async settle(timeoutMs = 30_000): Promise<ReadRecord[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(this.topic);
      return await this.waitFor(
        ends.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0),
        timeoutMs,
      );
    } finally {
      await admin.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}

function toRecord(partition: number, message: KafkaMessage): ReadRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? String(value[0]) : String(value);
  }
  return {
    partition,
    offset: message.offset,
    key: message.key?.toString() ?? null,
    value: message.value?.toString() ?? '',
    headers,
  };
}
