import { TestingModule } from '@nestjs/testing';
import { MessagingHealthIndicator, MessagingMetrics, TransportOptions } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { dialectLabel, TestDialect } from '../../harness/test-database';
import { depthOf } from '../redrive/support/parked-messages';
import { createMessagingApp, kafkaTransport, rabbitTransport } from '../support/messaging-app';
import { SuiteResources, useKafkaSuite, useRabbitSuite } from '../support/suite-resources';
import {
  consumerV1,
  consumerV2,
  DeployHandled,
  INSTANCE_NAME,
  orderPlacedV1,
  orderPlacedV2,
  producerOf,
  VersionedProducer,
} from '../support/versioned-orders.fixture';

/** Ten keys: on Kafka spread over both partitions, on RabbitMQ over both instances' lanes. */
const CUSTOMERS = Array.from({ length: 10 }, (_, i) => `customer-${i}`);

interface Broker {
  readonly transport: TransportOptions;
  /** Creates (Kafka) or tracks (RabbitMQ) what the destination and group need. */
  prepare(destination: string, group: string): Promise<void>;
  /** Messages in the group's dead-letter destination. */
  deadLettered(destination: string, group: string): Promise<number>;
}

function kafkaBroker(suite: ReturnType<typeof useKafkaSuite>): Broker {
  return {
    transport: kafkaTransport(),
    prepare: async (destination, group) => {
      await suite.topics.create(destination, 2);
      suite.topics.trackPrefix(`${destination}.${group}.`);
    },
    deadLettered: async (destination, group) => {
      const admin = suite.kafka.admin();
      await admin.connect();
      try {
        const topic = `${destination}.${group}.dlq`;
        if (!(await admin.listTopics()).includes(topic)) return 0;
        const offsets = await admin.fetchTopicOffsets(topic);
        return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      } finally {
        await admin.disconnect();
      }
    },
  };
}

function rabbitBroker(suite: ReturnType<typeof useRabbitSuite>): Broker {
  return {
    transport: rabbitTransport(),
    prepare: async (destination, group) => suite.rabbit.trackConsumer(destination, group),
    deadLettered: async (destination, group) =>
      depthOf(await suite.rabbit.connect(), `${destination}.${group}.dlq`),
  };
}

/**
 * A rolling deploy: two consumer instances of one group (apps of their own), both on version 1 of
 * OrderPlaced; one is upgraded to version 2 (an upcaster from 1), the producer moves from version 1 to 2
 * (both producer instances write for a while, on one outbox), then the other consumer is upgraded. The old
 * consumer holds the version-2 messages it gets (Kafka: pausing its partition; RabbitMQ: keeping them
 * unacked) until it stops; the upgraded ones take them, and version-1 messages through the upcaster. Nothing
 * is dead-lettered, nothing lost, each message handled once. Each broker on each database.
 */
describe.each([
  ['Kafka', 'postgres'],
  ['RabbitMQ', 'postgres'],
  ['Kafka', 'mariadb'],
  ['RabbitMQ', 'mariadb'],
] as const)('A rolling deploy to event version 2 on %s (%s)', (transport, dialect: TestDialect) => {
  const suite: SuiteResources =
    transport === 'Kafka'
      ? useKafkaSuite('rolling_kafka', dialect)
      : useRabbitSuite('rolling_rabbit', dialect);
  const broker =
    transport === 'Kafka'
      ? kafkaBroker(suite as ReturnType<typeof useKafkaSuite>)
      : rabbitBroker(suite as ReturnType<typeof useRabbitSuite>);

  /** Starts an app of the suite's (producer: relay on; consumer: relay off); `stop` closes it early. */
  async function start(
    name: string,
    providers: Parameters<typeof createMessagingApp>[0]['providers'],
    relay: boolean,
  ) {
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: broker.transport,
      entities: [DeployHandled],
      providers: [{ provide: INSTANCE_NAME, useValue: name }, ...(providers ?? [])],
      messaging: {
        serviceName: name,
        relay: { enabled: relay, pollIntervalMs: 500 },
        consumers: { concurrency: 2, batchSize: 5 },
      },
    });
    suite.apps.push(app);
    return app;
  }

  async function stop(app: TestingModule): Promise<void> {
    suite.apps.splice(suite.apps.indexOf(app), 1);
    await app.close();
  }

  const rows = () =>
    suite.schema.query<{
      message_id: string;
      instance: string;
      event_version: number;
      amount_cents: number;
      currency: string | null;
      seq: number;
    }>(
      'select message_id, instance, event_version, amount_cents, currency, seq from deploy_handled order by id',
    );

  it(`holds version 2 on the old instance until it is upgraded: nothing dead-lettered or lost, each handled once (${dialectLabel(dialect)})`, async () => {
    const destination = uniqueName('rolling');
    const group = uniqueName('billing');
    await broker.prepare(destination, group);
    const v1 = orderPlacedV1(destination);
    const v2 = orderPlacedV2(destination);
    const sent = new Map<string, { version: number; seq: number; amount: number }>();
    let seq = 0;
    const write = async (producer: VersionedProducer, version: 1 | 2, customer: string) => {
      seq += 1;
      const amount = seq;
      const payload =
        version === 1
          ? { orderId: seq, customer, amount, seq }
          : { orderId: seq, customer, amountCents: amount * 100, currency: 'USD', seq };
      sent.set(await producer.place(payload), { version, seq, amount });
    };

    // Both instances on version 1, the producer too.
    const old1 = await start('old-1', [consumerV1(destination, group)], false);
    const old2 = await start('old-2', [consumerV1(destination, group)], false);
    const ProducerV1 = producerOf(v1);
    const producerV1 = await start('producer-v1', [ProducerV1], true);
    const writerV1 = producerV1.get(ProducerV1);
    for (const customer of CUSTOMERS) await write(writerV1, 1, customer);
    await eventually(async () => expect(await rows()).toHaveLength(sent.size), 60_000);

    // The second instance is upgraded; a producer on version 2 starts beside the one on version 1.
    await stop(old2);
    const new2 = await start('new-2', [consumerV2(destination, group)], false);
    const ProducerV2 = producerOf(v2);
    const producerV2 = await start('producer-v2', [ProducerV2], true);
    const writerV2 = producerV2.get(ProducerV2);
    for (const customer of CUSTOMERS) {
      await write(writerV1, 1, customer);
      await write(writerV2, 2, customer);
    }
    for (const customer of CUSTOMERS) await write(writerV2, 2, customer);

    // The old instance holds what it got of version 2 (a health warning and a metric say so); the upgraded one
    // takes both versions.
    await eventually(async () => {
      const health = old1.get(MessagingHealthIndicator).heldMessages();
      expect(health.heldMessages.status).toBe('up');
      expect(String(health.heldMessages.warning)).toContain('held');
      expect(Number(health.heldMessages.held)).toBeGreaterThanOrEqual(1);
    }, 60_000);
    expect(await old1.get(MessagingMetrics).metrics()).toMatch(
      /messaging_consumer_holds_total\{[^}]*reason="version"\} [1-9]/,
    );

    // The first instance goes down for its upgrade: what it held goes to the upgraded one, and so does what the
    // version-1 producer still writes (upcast there). Written while the upgraded instance is the only consumer,
    // so that it meets version 1 whatever share of the earlier messages the broker gave it.
    await stop(old1);
    for (const customer of CUSTOMERS) await write(writerV1, 1, customer);
    await stop(producerV1);
    await eventually(async () => {
      const upcast = (await rows()).filter((r) => r.instance === 'new-2' && r.event_version === 1);
      expect(upcast.length).toBeGreaterThanOrEqual(1);
    }, 60_000);
    await start('new-1', [consumerV2(destination, group)], false);
    await eventually(async () => expect(await rows()).toHaveLength(sent.size), 90_000);

    const handled = await rows();
    // Nothing lost, each handled once.
    expect(new Set(handled.map((r) => r.message_id))).toEqual(new Set(sent.keys()));
    expect(handled).toHaveLength(sent.size);
    for (const row of handled) {
      const expected = sent.get(row.message_id);
      expect({ ...row, instance: undefined }).toEqual({
        message_id: row.message_id,
        instance: undefined,
        event_version: expected?.version,
        amount_cents: (expected?.amount ?? 0) * 100,
        // v1 through the upcaster (EUR), v2 as written (USD); an old instance records none.
        currency: row.instance.startsWith('old') ? null : expected?.version === 1 ? 'EUR' : 'USD',
        seq: expected?.seq,
      });
      // No old instance ever handled a version-2 message.
      if (row.instance.startsWith('old')) expect(row.event_version).toBe(1);
    }
    // Nothing dead-lettered.
    expect(await broker.deadLettered(destination, group)).toBe(0);
    expect(await new2.get(MessagingMetrics).metrics()).not.toMatch(/messaging_dead_lettered_total\{/);
  }, 240_000);
});
