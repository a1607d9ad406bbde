import { TestingModule } from '@nestjs/testing';
import {
  MessagingHealthIndicator,
  MessagingMetrics,
  newMessageId,
  RetryMode,
  VersionHoldOptions,
} from 'nest-reliable-messaging';
import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { KafkaTopics } from '../../harness/kafka';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { uniqueName } from '../../harness/names';
import { depthOf } from '../redrive/support/parked-messages';
import { committedTotal } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport, rabbitTransport } from '../support/messaging-app';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useKafkaSuite, useRabbitSuite } from '../support/suite-resources';
import { TopicReader } from '../support/topic-reader';
import {
  consumerV2,
  DeployHandled,
  INSTANCE_NAME,
  orderPlacedV1,
  orderPlacedV2,
  producerOf,
} from '../support/versioned-orders.fixture';

/** A short hold, so that a held message reaches its dead letter within a test. */
const SHORT_HOLD: VersionHoldOptions = { windowMs: 3_000, initialDelayMs: 200, maxDelayMs: 500 };

/** An OrderPlaced message of `version` (1: `amount`; later: `amountCents` and a currency) for `customer`. */
function order(destination: string, version: number, customer: string, seq: number): WireMessage {
  const payload =
    version === 1
      ? { orderId: seq, customer, amount: seq, seq }
      : { orderId: seq, customer, amountCents: seq * 100, currency: 'USD', seq };
  return encodeEnvelope(
    {
      messageId: newMessageId(),
      type: 'OrderPlaced',
      destination,
      key: customer,
      occurredAt: new Date(),
      eventVersion: version,
      headers: {},
    },
    JSON.stringify(payload),
  );
}

type Rows = Array<{ seq: number; event_version: number; currency: string }>;

/**
 * What a version-2 consumer does with messages it cannot read (yet), on each broker: a newer version (3) is
 * held (a metric, a health warning) for the window, then dead-lettered with its version; a message an upcaster
 * throws on likewise, as UPCAST, and never dropped, also under `onNonRetryable: 'REJECT'`. On Kafka the held
 * message keeps its key's later messages behind it (order kept); on RabbitMQ its lane waits.
 */
describe('Event versions a consumer cannot read yet', () => {
  describe('on Kafka', () => {
    const suite = useKafkaSuite('versions_kafka');

    /** A v2 consumer; with `upcasterThrows`, its upcaster fails and the destination's policy says REJECT. */
    async function consumer(topic: string, group: string, upcasterThrows = false): Promise<TestingModule> {
      const event = orderPlacedV2(
        topic,
        upcasterThrows
          ? () => {
              throw new TypeError('no exchange rate');
            }
          : undefined,
      );
      const app = await createMessagingApp({
        schema: suite.schema,
        transport: kafkaTransport(),
        entities: [DeployHandled],
        providers: [{ provide: INSTANCE_NAME, useValue: 'v2' }, consumerV2(topic, group, event)],
        messaging: {
          relay: { enabled: false },
          consumers: { versionHold: SHORT_HOLD },
          retryDefaults: upcasterThrows
            ? { [topic]: { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, onNonRetryable: 'REJECT' } }
            : {},
        },
      });
      suite.apps.push(app);
      return app;
    }

    const rows = (group: string) =>
      suite.schema.query<Rows[number]>(
        'select seq, event_version, currency from deploy_handled where consumer_group = $1 order by id',
        [group],
      );

    // claim: C-102
    it('holds a newer version (its key waits behind it), warns, then dead-letters it with its version; the key goes on in order', async () => {
      const topic = await suite.topics.create(uniqueName('v3'), 1);
      const group = uniqueName('g');
      suite.topics.trackPrefix(`${topic}.${group}.`);
      const app = await consumer(topic, group);
      const newer = order(topic, 3, 'k', 2);
      await suite.raw.send([
        order(topic, 1, 'k', 1),
        newer,
        order(topic, 2, 'k', 3),
        order(topic, 1, 'k', 4),
      ]);

      await eventually(async () => {
        const health = app.get(MessagingHealthIndicator).heldMessages();
        expect(health.heldMessages.held).toBe(1);
        expect(typeof health.heldMessages.warning).toBe('string');
      });
      expect((await rows(group)).map((r) => r.seq)).toEqual([1]); // 3 and 4 wait behind the held one

      await eventually(async () => expect(await committedTotal(suite.kafka, group, topic)).toBe(4));
      expect(await rows(group)).toEqual([
        { seq: 1, event_version: 1, currency: 'EUR' },
        { seq: 3, event_version: 2, currency: 'USD' },
        { seq: 4, event_version: 1, currency: 'EUR' },
      ]);
      const dlq = await new TopicReader(`${topic}.${group}.dlq`, suite.kafka).start();
      const [parked] = await dlq.waitFor(1);
      await dlq.stop();
      expect(parked.headers).toMatchObject({
        'msg.id': newer.headers['msg.id'],
        'msg.failure-category': 'VALIDATION',
        'msg.failure-code': 'VERSION_TOO_NEW',
        'msg.event-version': '3',
      });
      expect(app.get(MessagingHealthIndicator).heldMessages().heldMessages).toEqual({
        status: 'up',
        held: 0,
      });
      const text = await app.get(MessagingMetrics).metrics();
      expect(text).toMatch(/messaging_consumer_holds_total\{[^}]*reason="version"\} [1-9]/);
      expect(text).toMatch(/messaging_dead_lettered_total\{[^}]*category="VALIDATION"\} 1/);
    });

    it('holds a message its upcaster throws on, then dead-letters it as UPCAST, never dropped (even under REJECT)', async () => {
      const topic = await suite.topics.create(uniqueName('upcast'), 1);
      const group = uniqueName('g');
      suite.topics.trackPrefix(`${topic}.${group}.`);
      await consumer(topic, group, true);
      const v1 = order(topic, 1, 'k', 1);
      await suite.raw.send([v1, order(topic, 2, 'k', 2)]);

      await eventually(async () => expect(await committedTotal(suite.kafka, group, topic)).toBe(2));
      expect((await rows(group)).map((r) => r.seq)).toEqual([2]);
      const dlq = await new TopicReader(`${topic}.${group}.dlq`, suite.kafka).start();
      const [parked] = await dlq.waitFor(1);
      await dlq.stop();
      expect(parked.headers).toMatchObject({
        'msg.id': v1.headers['msg.id'],
        'msg.failure-category': 'UPCAST',
        'msg.failure-code': 'UPCAST_FAILED',
      });
      expect(Object.values(parked.headers).join(' ')).not.toContain('no exchange rate');
    });
  });

  describe('on RabbitMQ', () => {
    const suite = useRabbitSuite('versions_rabbit');

    // claim: C-102
    it('holds a newer version unacked, warns, then dead-letters it with its version; the rest is handled', async () => {
      const destination = uniqueName('v3');
      const group = uniqueName('g');
      suite.rabbit.trackConsumer(destination, group);
      const app = await createMessagingApp({
        schema: suite.schema,
        transport: rabbitTransport(),
        entities: [DeployHandled],
        providers: [{ provide: INSTANCE_NAME, useValue: 'v2' }, consumerV2(destination, group)],
        messaging: { relay: { enabled: false }, consumers: { versionHold: SHORT_HOLD } },
      });
      suite.apps.push(app);
      const newer = order(destination, 3, 'k', 2);
      await publishRaw(await suite.rabbit.connect(), [
        order(destination, 1, 'k', 1),
        newer,
        order(destination, 2, 'j', 3),
      ]);

      await eventually(async () => {
        const health = app.get(MessagingHealthIndicator).heldMessages();
        expect(health.heldMessages.held).toBe(1);
        expect(typeof health.heldMessages.warning).toBe('string');
      });
      const dlq = `${destination}.${group}.dlq`;
      const connection = await suite.rabbit.connect();
      await eventually(async () => {
        expect(await depthOf(connection, dlq)).toBe(1);
      });
      const parked = await drainQueue(connection, dlq);
      expect(parked.map((m) => String(m.properties.headers?.['msg.failure-code']))).toEqual([
        'VERSION_TOO_NEW',
      ]);
      expect(parked[0].properties.headers?.['msg.event-version']).toBe('3');
      expect(parked[0].properties.headers?.['msg.id']).toBe(newer.headers['msg.id']);
      expect(app.get(MessagingHealthIndicator).heldMessages().heldMessages).toEqual({
        status: 'up',
        held: 0,
      });
      const handled = await suite.schema.query<Rows[number]>(
        'select seq, event_version, currency from deploy_handled where consumer_group = $1 order by seq',
        [group],
      );
      expect(handled).toEqual([
        { seq: 1, event_version: 1, currency: 'EUR' },
        { seq: 3, event_version: 2, currency: 'USD' },
      ]);
    });
  });

  /** Both relays carry the version `OutboxService.add()` stamps: the polling one and the logical one. */
  describe('published through the outbox', () => {
    const topics = new KafkaTopics();
    let cluster: PostgresCluster | undefined;
    let logicalDb: LogicalSchema | undefined;
    let pollingDb: TestDatabase | undefined;
    const apps: TestingModule[] = [];
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await topics.cleanup();
      await logicalDb?.drop();
      await cluster?.destroy();
      await pollingDb?.drop();
    });

    it.each(['poll', 'logical'] as const)(
      'the %s relay publishes msg.event-version 2 for a version-2 event, and none for version 1',
      async (mode) => {
        let schema: TestDatabase | LogicalSchema;
        if (mode === 'logical') {
          cluster = await startLogicalCluster('event-versions');
          schema = logicalDb = await createLogicalSchema(cluster, 'versions_logical');
        } else {
          schema = pollingDb = await createTestDatabase('postgres', 'versions_poll');
        }
        const topic = await topics.create(uniqueName(`versions_${mode}`), 1);
        const [ProducerV1, ProducerV2] = [producerOf(orderPlacedV1(topic)), producerOf(orderPlacedV2(topic))];
        const app = await createMessagingApp({
          schema,
          transport: kafkaTransport(),
          providers: [ProducerV1, ProducerV2],
          messaging: { relay: { mode } },
        });
        apps.push(app);
        const first = await app.get(ProducerV1).place({ orderId: 1, customer: 'k', amount: 1, seq: 1 });
        const second = await app
          .get(ProducerV2)
          .place({ orderId: 2, customer: 'k', amountCents: 200, currency: 'EUR', seq: 2 });

        const reader = await new TopicReader(topic).start();
        const records = await reader.waitFor(2, 60_000);
        await reader.stop();
        expect(records.map((r) => [r.headers['msg.id'], r.headers['msg.event-version']])).toEqual([
          [first, undefined],
          [second, '2'],
        ]);
      },
      120_000,
    );
  });
});
