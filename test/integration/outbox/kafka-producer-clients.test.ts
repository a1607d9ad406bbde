import { TestingModule } from '@nestjs/testing';
import {
  decodeEnvelope,
  MESSAGING_TRANSPORT,
  MessageTransport,
  WireMessage,
} from 'nest-reliable-messaging/testing';
import { KafkaProducerClient } from 'nest-reliable-messaging';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { ProxiedKafka, startProxiedKafka } from '../../harness/proxied';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { createMessagingApp } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { orderMessage } from '../support/raw-messages';
import { ReadRecord, TopicReader } from '../support/topic-reader';
import type { Frame } from '../../harness/fault-proxy';

const CLIENTS: KafkaProducerClient[] = ['kafkajs', 'platformatic'];
const CUSTOMERS = 12;
const ORDERS = 60;

/**
 * `transport.producerClient`: the relay publishing through kafkajs and through @platformatic/kafka, side by
 * side on the shared broker. The same rows reach the topic once each, in order per key, with the envelope
 * intact, and each key on the same partition with either client; a refused message is REJECTED; sends that
 * overlap on one partition are all written.
 */
describe('Kafka producer clients (kafkajs, @platformatic/kafka)', () => {
  const topics = new KafkaTopics();
  const readers: TopicReader[] = [];
  const apps = new Map<KafkaProducerClient, TestingModule>();
  const databases = new Map<KafkaProducerClient, TestDatabase>();
  const destinations = new Map<KafkaProducerClient, string>();

  beforeAll(async () => {
    for (const client of CLIENTS) {
      const db = await createTestDatabase('postgres', `producer_${client}`);
      databases.set(client, db);
      const topic = await topics.create(uniqueName(`orders_producer_${client}`), 3);
      destinations.set(client, topic);
      apps.set(
        client,
        await createMessagingApp({
          schema: db,
          transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers, producerClient: client },
          ...ordersWriter(topic),
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.stop()));
    await Promise.all([...apps.values()].map((app) => app.close()));
    await Promise.all([...databases.values()].map((db) => db.drop()));
    await topics.cleanup();
  });

  const read = async (topic: string, count: number): Promise<ReadRecord[]> => {
    const reader = await new TopicReader(topic).start();
    readers.push(reader);
    await reader.waitFor(count);
    return reader.settle();
  };

  // claim: C-30
  it('publishes every row once, in order per key, each key on the same partition with either client', async () => {
    const partitions = new Map<KafkaProducerClient, Map<string, number>>();
    for (const client of CLIENTS) {
      const app = apps.get(client) as TestingModule;
      const db = databases.get(client) as TestDatabase;
      for (let seq = 1; seq <= ORDERS; seq++) {
        await app.get(OrdersService).place(`customer-${seq % CUSTOMERS}`, seq, seq);
      }
      const rows = await waitUntil(`every row is sent (${client})`, async () => {
        const all = await readOutboxRows(db);
        return all.length === ORDERS && all.every((r) => r.sentAt !== null) && all;
      });

      const records = await read(destinations.get(client) as string, ORDERS);
      expect(records).toHaveLength(ORDERS);
      expect(new Set(records.map((r) => r.headers['msg.id']))).toEqual(new Set(rows.map((r) => r.messageId)));
      const byKey = new Map<string, number>();
      for (const record of records) {
        const decoded = decodeEnvelope({
          destination: destinations.get(client) as string,
          key: record.key,
          headers: record.headers,
          body: Buffer.from(record.value),
        });
        expect(decoded.ok).toBe(true);
        const key = record.key as string;
        expect(byKey.get(key) ?? record.partition).toBe(record.partition); // one partition per key
        byKey.set(key, record.partition);
      }
      partitions.set(client, byKey);
      for (let c = 0; c < CUSTOMERS; c++) {
        const seqs = records
          .filter((r) => r.key === `customer-${c}`)
          .map((r) => (JSON.parse(r.value) as { seq: number }).seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
    }
    expect(partitions.get('platformatic')).toEqual(partitions.get('kafkajs'));
    expect(new Set(partitions.get('kafkajs')?.values()).size).toBeGreaterThan(1); // the keys did spread
  });

  it('answers REJECTED for a message larger than the topic takes, and writes nothing', async () => {
    const transport = transportOf('platformatic');
    // The limit is the topic's from its creation: one set afterwards by alterConfigs reaches the partition's
    // log a moment later, and a send in between was written (seen in a fresh-clone CI run under load).
    const topic = await topics.create(uniqueName('orders_producer_small'), 1, [
      { name: 'max.message.bytes', value: '2048' },
    ]);
    const tooLarge: WireMessage = {
      ...orderMessage(topic, { customer: 'big', seq: 1 }),
      body: Buffer.alloc(8_192, 'x'),
    };
    const [outcome] = await transport.publish([tooLarge]);
    expect(outcome.status).toBe('REJECTED');
    expect(outcome.status !== 'CONFIRMED' && outcome.error.message).toMatch(/too large|MESSAGE_TOO_LARGE/i);
    const [small] = await transport.publish([orderMessage(topic, { customer: 'small', seq: 2 })]);
    expect(small.status).toBe('CONFIRMED'); // the producer goes on after a refusal
    const records = await read(topic, 1);
    expect(records.map((r) => r.key)).toEqual(['small']);
  });

  // claim: C-31
  it('writes every message of sends that overlap on one partition (the relay and dead-letter copies)', async () => {
    const transport = transportOf('platformatic');
    const topic = await topics.create(uniqueName('orders_producer_overlap'), 1);
    await transport.ensureDestinations([topic]);
    // Batches of equal size on one partition, all on their way at once: sent together they would carry the
    // same sequence numbers, and the broker would drop all but the first as retries of it.
    const batches = Array.from({ length: 4 }, (_, b) =>
      Array.from({ length: 5 }, (_, i) => orderMessage(topic, { customer: 'one-key', seq: b * 5 + i })),
    );
    const outcomes = await Promise.all(batches.map((batch) => transport.publish(batch)));
    expect(outcomes.flat().every((o) => o.status === 'CONFIRMED')).toBe(true);
    const records = await read(topic, 20);
    expect(records).toHaveLength(20);
    expect(new Set(records.map((r) => r.headers['msg.id']))).toEqual(
      new Set(batches.flat().map((m) => m.headers['msg.id'])),
    );
  });

  function transportOf(client: KafkaProducerClient): MessageTransport {
    return (apps.get(client) as TestingModule).get<MessageTransport>(MESSAGING_TRANSPORT);
  }
});

/**
 * Issue 26, defect 2: sequence numbers reused after an ambiguous send. A private broker behind a fault proxy
 * writes a batch whose answer the proxy drops; a second send is queued behind it. Reusing the first send's
 * producer id and sequence numbers, the second batch would be taken for a retry of the first: confirmed and
 * never written. Every message must end up on the topic, read back with a raw consumer past the proxy.
 */
describe('Kafka producer clients when an answer is lost after the broker wrote the batch', () => {
  let kafka: ProxiedKafka;
  let topics: KafkaTopics;
  const readers: TopicReader[] = [];
  const apps = new Map<KafkaProducerClient, TestingModule>();
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    kafka = await startProxiedKafka();
    topics = new KafkaTopics(testKafka(kafka.directBrokers));
    for (const client of CLIENTS) {
      const db = await createTestDatabase('postgres', `producer_lost_${client}`);
      databases.push(db);
      apps.set(
        client,
        await createMessagingApp({
          schema: db,
          transport: { kind: 'kafka', brokers: kafka.brokers, producerClient: client },
        }),
      );
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.stop()));
    await Promise.all([...apps.values()].map((app) => app.close()));
    await Promise.all(databases.map((db) => db.drop()));
    await topics?.cleanup();
    await kafka?.destroy();
  }, 120_000);

  afterEach(() => kafka.proxy.heal());

  /** Every record on the topic now, read past the proxy. */
  const recordsOf = async (topic: string): Promise<ReadRecord[]> => {
    const reader = await new TopicReader(topic, testKafka(kafka.directBrokers)).start();
    readers.push(reader);
    return reader.settle();
  };

  /** A one-partition topic the transport knows, with one message confirmed on it (the producer is up). */
  const freshTopic = async (client: KafkaProducerClient): Promise<string> => {
    const topic = await topics.create(uniqueName(`lost_answer_${client}`), 1);
    const transport = transportOf(client);
    await transport.ensureDestinations([topic]);
    const [warm] = await transport.publish([orderMessage(topic, { customer: 'k', seq: 0 })]);
    expect(warm.status).toBe('CONFIRMED');
    return topic;
  };

  /** A Produce request (or its answer) carrying the message with `id`. */
  const carrying = (id: string) => (frame: Frame) =>
    frame.apiKey === 0 && (frame.request ?? frame).bytes.includes(Buffer.from(id));

  it.each(CLIENTS)(
    '%s: a send queued behind one whose answer was lost is written, and so is the lost one',
    async (client) => {
      const transport = transportOf(client);
      const topic = await freshTopic(client);
      const [a, b] = [1, 2].map((seq) => orderMessage(topic, { customer: 'k', seq }));
      const idOf = (m: WireMessage) => m.headers['msg.id'];
      // The broker writes A; its answer never comes back; the client's retries of A are cut before they
      // reach the broker: A's send fails (AMBIGUOUS), with A on the topic.
      const lost = kafka.proxy.on({ direction: 'downstream', match: carrying(idOf(a)), action: 'drop' });
      const first = transport.publish([a]);
      await lost;
      void kafka.proxy.on({
        direction: 'upstream',
        match: carrying(idOf(a)),
        action: 'cut',
        times: Number.POSITIVE_INFINITY,
      });
      const second = transport.publish([b]); // queued behind A: it must not reuse A's sequence numbers

      const outcomes = [...(await first), ...(await second)];
      await kafka.proxy.heal();
      const ids = (await recordsOf(topic)).map((r) => r.headers['msg.id']);
      expect(ids).toEqual(expect.arrayContaining([idOf(a), idOf(b)]));
      expect(outcomes[1].status).toBe('CONFIRMED');
    },
    120_000,
  );

  // claim: C-31
  it.each(CLIENTS)(
    '%s: a send whose caller stopped waiting before it started is never sent',
    async (client) => {
      const transport = transportOf(client);
      const topic = await freshTopic(client);
      const [a, c] = [1, 2].map((seq) => orderMessage(topic, { customer: 'k', seq }));
      // A's answer is held a while: C waits behind A, and its caller gives up meanwhile (the relay's deadline).
      const held = kafka.proxy.on({
        direction: 'downstream',
        match: carrying(a.headers['msg.id']),
        action: { delayMs: 3_000 },
      });
      const first = transport.publish([a]);
      await held;
      const abandon = new AbortController();
      const second = transport.publish([c], { signal: abandon.signal });
      abandon.abort();
      const [outcome] = await second;
      expect(outcome.status).toBe('AMBIGUOUS');
      expect((await first)[0].status).toBe('CONFIRMED');
      const [after] = await transport.publish([orderMessage(topic, { customer: 'k', seq: 3 })]);
      expect(after.status).toBe('CONFIRMED');
      const ids = (await recordsOf(topic)).map((r) => r.headers['msg.id']);
      expect(ids).toContain(a.headers['msg.id']);
      expect(ids).not.toContain(c.headers['msg.id']);
    },
    120_000,
  );

  function transportOf(client: KafkaProducerClient): MessageTransport {
    return (apps.get(client) as TestingModule).get<MessageTransport>(MESSAGING_TRANSPORT);
  }
});
