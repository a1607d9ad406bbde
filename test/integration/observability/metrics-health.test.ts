import {
  MessagingHealthIndicator,
  MessagingMetrics,
  RetryMode,
  RetryOrdering,
} from 'nest-reliable-messaging';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { eventually } from '../../harness/eventually';
import { startPrivateBroker } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { Order, orderPlaced, OrdersService, ordersWriter } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { useKafkaSuite } from '../support/suite-resources';

/** The value of one sample in Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((w) => line.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe.each(EACH_DATABASE)('Metrics and health (%s)', (_, dialect) => {
  const suite = useKafkaSuite('observability', dialect);
  const { topics, raw, apps } = suite;

  // claim: C-84
  it('moves each metric as messages are published, duplicated, retried and dead-lettered', async () => {
    const topic = await topics.create(uniqueName('metrics'), 1);
    const group = uniqueName('g');
    topics.track(`${topic}.${group}.dlq`);
    const probe = new ConsumerProbe();
    probe.failUntilAttempt.set(1, 2); // one inline retry
    probe.alwaysFail.add(2); // dead-lettered after two attempts
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: kafkaTransport(),
      entities: [Order, HandledOrder],
      providers: [
        ...ordersWriter(topic).providers,
        { provide: ConsumerProbe, useValue: probe },
        // ALLOW_REORDER: on Kafka, PRESERVE would choose pause-and-retry before INLINE (decision step 3).
        ordersConsumer(orderPlaced(topic), group, {
          maxAttempts: 2,
          mode: RetryMode.INLINE,
          ordering: RetryOrdering.ALLOW_REORDER,
          backoff: { initialDelayMs: 50 },
        }),
      ],
    });
    apps.push(app);
    const metrics = app.get(MessagingMetrics);
    const orders = app.get(OrdersService);

    await orders.place('m', 1, 1);
    await orders.place('m', 2, 2);
    await orders.place('m', 3, 3);
    const duplicate = orderMessage(topic, { customer: 'm', seq: 4 });
    await raw.send([duplicate, duplicate]);

    const labels = { group, destination: topic };
    await eventually(async () => {
      const text = await metrics.metrics();
      expect(sample(text, 'messaging_outbox_published_total', { destination: topic })).toBe(3);
      expect(sample(text, 'messaging_consumer_messages_total', { ...labels, outcome: 'handled' })).toBe(3);
      expect(sample(text, 'messaging_consumer_messages_total', { ...labels, outcome: 'duplicate' })).toBe(1);
      expect(sample(text, 'messaging_consumer_retries_total', { ...labels, mode: 'inline' })).toBe(2);
      expect(
        sample(text, 'messaging_consumer_failed_attempts_total', { ...labels, category: 'TRANSIENT' }),
      ).toBe(3);
      expect(sample(text, 'messaging_dead_lettered_total', { ...labels, category: 'TRANSIENT' })).toBe(1);
    });
    const text = await metrics.metrics();
    expect(sample(text, 'messaging_outbox_pending', { destination: topic })).toBe(0);
    expect(sample(text, 'messaging_consumer_lag_seconds_count', labels)).toBeGreaterThanOrEqual(3);
    // The database's own estimates (absent before its statistics know the table, so only the form is checked).
    expect(text).toMatch(/^messaging_table_rows\{table="messaging_outbox"\} \d+$/m);
    expect(text).toMatch(/^messaging_table_rows\{table="messaging_inbox"\} \d+$/m);
    expect(text).toMatch(/# TYPE messaging_outbox_commit_to_publish_seconds histogram/);
    // The relay's batch figures (guide 10): each batch timed, each non-empty claim's size observed.
    expect(sample(text, 'messaging_outbox_publish_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'messaging_relay_claim_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'messaging_relay_claim_batch_size_sum')).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'messaging_outbox_commit_to_publish_seconds_count')).toBeGreaterThanOrEqual(3);
  });

  // claim: C-82
  it('reports the database up, and the outbox backlog degraded while a row waits unpublished', async () => {
    const topic = uniqueName('backlog');
    // No relay: the row stays pending.
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay: { enabled: false } },
    });
    apps.push(app);
    const health = app.get(MessagingHealthIndicator);
    expect((await health.database()).database.status).toBe('up');
    expect((await health.outboxBacklog('outbox', 200)).outbox).toMatchObject({ status: 'up', pending: 0 });
    await app.get(OrdersService).place('b', 1);
    await eventually(async () =>
      expect((await health.outboxBacklog('outbox', 200)).outbox).toMatchObject({
        status: 'down',
        degraded: true,
        pending: 1,
      }),
    );
    const oldest = (await health.outboxBacklog('outbox', 60_000)).outbox as unknown as {
      oldestPendingAgeMs: number;
    };
    expect(oldest.oldestPendingAgeMs).toBeGreaterThan(200);
    expect(oldest.oldestPendingAgeMs).toBeLessThan(60_000);
    const text = await app.get(MessagingMetrics).metrics();
    expect(sample(text, 'messaging_outbox_pending', { destination: topic })).toBe(1);
    expect(
      sample(text, 'messaging_outbox_oldest_pending_age_seconds', { destination: topic }),
    ).toBeGreaterThan(0.2);
    // The suite's later backlog checks count every pending row of the table.
    await suite.schema.query('delete from messaging_outbox where destination = $1', [topic]);
  });

  // Stopping a private broker costs time and tests nothing database-specific: PostgreSQL only.
  (dialect === 'postgres' ? describe : describe.skip)('health with a broker stopped and started', () => {
    let broker: KafkaBroker;

    beforeAll(async () => {
      broker = await startPrivateBroker();
    });

    afterAll(async () => {
      await broker.destroy();
    });

    // claim: C-82
    it('reports the broker down while stopped and up again after; the outbox backlog degraded while rows wait', async () => {
      const topic = uniqueName('health');
      const app = await createMessagingApp({
        schema: suite.schema,
        transport: kafkaTransport(broker.brokers),
        ...ordersWriter(topic),
        messaging: { relay: { retryInitialDelayMs: 100, retryMaxDelayMs: 500 } },
      });
      apps.push(app);
      const health = app.get(MessagingHealthIndicator);
      expect(await health.broker()).toEqual({ broker: { status: 'up', transport: 'kafka' } });
      expect((await health.database()).database.status).toBe('up');

      await broker.stop();
      expect((await health.broker()).broker.status).toBe('down');
      await app.get(OrdersService).place('h', 1);
      await eventually(async () =>
        expect((await health.outboxBacklog('outbox', 200)).outbox).toMatchObject({
          status: 'down',
          degraded: true,
          pending: 1,
        }),
      );

      await broker.start();
      expect((await health.broker()).broker.status).toBe('up');
      await eventually(
        async () =>
          expect((await health.outboxBacklog('outbox', 200)).outbox).toMatchObject({
            status: 'up',
            pending: 0,
          }),
        60_000,
      );
    });
  });
});
