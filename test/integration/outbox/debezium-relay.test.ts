import { Injectable } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { InjectRepository } from '@nestjs/typeorm';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Repository } from 'typeorm';
import { MessagingHealthIndicator, Outbox, OutboxService } from 'nest-reliable-messaging';
import { decodeEnvelope } from 'nest-reliable-messaging/testing';
import { DebeziumRelay } from '../../harness/debezium';
import { eventually } from '../../harness/eventually';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createLogicalSchema, LogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { Order, OrderEventHolder, orderPlaced } from '../support/orders.fixture';
import { ReadRecord, TopicReader } from '../support/topic-reader';
import { orderPlacedV1, orderPlacedV2, producerOf } from '../support/versioned-orders.fixture';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** Places an order and its event with headers of the caller's (as a request's trace context would be). */
@Injectable()
class HeaderedOrders {
  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly outbox: OutboxService,
    private readonly holder: OrderEventHolder,
  ) {}

  @Outbox()
  async place(customer: string, seq: number, headers: Record<string, string> = {}): Promise<string> {
    const order = await this.orders.save(this.orders.create({ customer, amount: seq }));
    return this.outbox.add(this.holder.event, { orderId: order.id, customer, amount: seq, seq }, { headers });
  }
}

/**
 * Debezium (Kafka Connect standalone, `io.debezium:debezium-connector-postgres` and its outbox event router,
 * with the connector of docs/guide/14-debezium.md) relaying the library's outbox from a private cluster with
 * `wal_level = logical` to Kafka: the records it writes are the library relay's, byte for byte, and a running
 * service switched from the library's relay to Debezium (`relay.mode: 'external'`) and back loses nothing.
 */
describe('Debezium relaying the outbox (relay.mode external)', () => {
  const topics = new KafkaTopics();
  const readers: TopicReader[] = [];
  const apps = new Set<TestingModule>();
  const probe = new ConsumerProbe();
  let cluster: PostgresCluster;
  let db: LogicalSchema;
  let topic: string;
  let group: string;
  let debezium: DebeziumRelay | undefined;

  const writerApp = async (mode: 'poll' | 'external'): Promise<TestingModule> => {
    const app = await createMessagingApp({
      schema: db,
      transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
      entities: [Order],
      providers: [
        HeaderedOrders,
        { provide: OrderEventHolder, useValue: new OrderEventHolder(orderPlaced(topic)) },
      ],
      messaging: { serviceName: `orders-${mode}`, relay: { mode } },
    });
    apps.add(app);
    return app;
  };
  const close = async (app: TestingModule) => {
    apps.delete(app);
    await app.close();
  };
  const reader = async (): Promise<TopicReader> => {
    const started = await new TopicReader(topic).start();
    readers.push(started);
    return started;
  };
  /** How many times the consumer group applied each message (by message id): the inbox's effect. */
  const appliedCounts = async (): Promise<Map<string, number>> => {
    const rows = await db.query<{ id: string; n: string }>(
      'select message_id as id, count(*) as n from handled_orders where consumer_group = $1 group by message_id',
      [group],
    );
    return new Map(rows.map((r) => [r.id, Number(r.n)]));
  };

  beforeAll(async () => {
    cluster = await startLogicalCluster('debezium');
    db = await createLogicalSchema(cluster, 'debezium', { createSlot: false });
    topic = await topics.create(uniqueName('orders_dbz'), 3);
    group = uniqueName('dbz_g');
    topics.track(`${topic}.${group}.dlq`);
    // The consumer runs throughout, in a service of its own; its inbox is in the same database.
    apps.add(
      await createMessagingApp({
        schema: db,
        transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
        entities: [HandledOrder],
        providers: [{ provide: ConsumerProbe, useValue: probe }, ordersConsumer(orderPlaced(topic), group)],
        messaging: { serviceName: 'orders-consumer', relay: { enabled: false } },
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(readers.map((r) => r.stop()));
    for (const app of [...apps].reverse()) await app.close();
    await debezium?.destroy();
    await topics.cleanup();
    await db?.drop();
    await cluster?.destroy();
  });

  it('writes each message as the library relay does: key, partition, body, headers, envelope, trace', async () => {
    const poll = await writerApp('poll');
    debezium = await DebeziumRelay.start({ cluster, schema: db.name });
    // Both relays publish what a polling service writes while Debezium reads the log: two copies of each row.
    const headers = { traceparent: TRACEPARENT, tracestate: 'vendor=opaque', 'x-tenant': 'acme' };
    const ids: string[] = [];
    for (let seq = 1; seq <= 6; seq++) {
      ids.push(await poll.get(HeaderedOrders).place(`customer-${seq % 3}`, seq, headers));
    }
    const records = await (await reader()).waitFor(12, 120_000);
    const byId = new Map<string, ReadRecord[]>();
    for (const record of records)
      byId.set(record.headers['msg.id'], [...(byId.get(record.headers['msg.id']) ?? []), record]);

    expect([...byId.keys()].sort()).toEqual([...ids].sort());
    for (const [id, copies] of byId) {
      expect(copies).toHaveLength(2);
      const [first, second] = copies.map(({ offset: _offset, ...rest }) => rest);
      expect(second).toEqual(first); // partition, key, body and every header, as strings
      const decoded = copies.map((c) =>
        decodeEnvelope({ destination: topic, key: c.key, headers: c.headers, body: Buffer.from(c.value) }),
      );
      expect(decoded[1]).toEqual(decoded[0]);
      expect(decoded[0]).toMatchObject({
        ok: true,
        envelope: { messageId: id, type: 'OrderPlaced', headers },
      });
      const occurredAt = decoded[0].ok ? decoded[0].envelope.occurredAt.toISOString() : '';
      expect(first.headers).toEqual({
        ...headers,
        'msg.id': id,
        'msg.type': 'OrderPlaced',
        'msg.occurred-at': occurredAt, // as Date.toISOString() writes it: milliseconds, UTC
        'msg.envelope-version': '1',
        'content-type': 'application/json',
      });
    }
    // The consumer applied each message once: the inbox dropped the second copy.
    await eventually(async () => expect(probe.invocations).toBe(6), 60_000);
    const applied = await appliedCounts();
    expect(ids.map((id) => applied.get(id))).toEqual([1, 1, 1, 1, 1, 1]);
    await close(poll);
  }, 300_000);

  it('carries the event version OutboxService.add() stores in the row (msg.event-version), as the relay does', async () => {
    const versioned = await topics.create(uniqueName('orders_dbz_v2'), 1);
    const [ProducerV1, ProducerV2] = [
      producerOf(orderPlacedV1(versioned)),
      producerOf(orderPlacedV2(versioned)),
    ];
    const external = await createMessagingApp({
      schema: db,
      transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
      providers: [ProducerV1, ProducerV2],
      messaging: { serviceName: 'orders-versions', relay: { mode: 'external' } },
    });
    apps.add(external);
    const v1 = await external.get(ProducerV1).place({ orderId: 1, customer: 'k', amount: 1, seq: 1 });
    const v2 = await external
      .get(ProducerV2)
      .place({ orderId: 2, customer: 'k', amountCents: 200, currency: 'EUR', seq: 2 });
    const versionedReader = await new TopicReader(versioned).start();
    readers.push(versionedReader);
    const records = await versionedReader.waitFor(2, 120_000);
    expect(records.map((r) => [r.headers['msg.id'], r.headers['msg.event-version']])).toEqual([
      [v1, undefined],
      [v2, '2'],
    ]);
    await close(external);
  }, 300_000);

  it('continues the writer trace to the consumer, and reports the external mode in /health', async () => {
    const exporter = new InMemorySpanExporter();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    try {
      const external = await writerApp('external');
      const request = trace.getTracer('test').startSpan('POST /orders', { kind: SpanKind.SERVER });
      await context.with(trace.setSpan(context.active(), request), () =>
        external.get(HeaderedOrders).place('traced', 1_000),
      );
      request.end();
      const process = await eventually(() => {
        const span = exporter.getFinishedSpans().find((s) => s.name === `process ${topic}`);
        expect(span).toBeDefined();
        return span;
      }, 120_000);
      // No relay of ours published it: the handler's span is the request's child, in the request's trace.
      expect(process?.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(process?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(exporter.getFinishedSpans().some((s) => s.name === `publish ${topic}`)).toBe(false);
      expect(await external.get(MessagingHealthIndicator).relay()).toEqual({
        relay: { status: 'up', mode: 'external' },
      });
      await close(external);
    } finally {
      trace.disable();
      context.disable();
      propagation.disable();
    }
  }, 300_000);
  it('switches a running service to Debezium and back, through a Debezium crash, losing nothing', async () => {
    const live = debezium as DebeziumRelay;
    const committed = new Map<number, string>(); // seq → message id
    const writers: TestingModule[] = [];
    let seq = 100;
    let stopped = false;
    let inFlight: Promise<void> = Promise.resolve();
    // One order at a time, round-robin over the instances running, as a load balancer would.
    const load = (async () => {
      while (!stopped) {
        const writer = writers[seq % Math.max(1, writers.length)];
        if (!writer) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const next = seq++;
        inFlight = writer
          .get(HeaderedOrders)
          .place(`customer-${next % 5}`, next, { traceparent: TRACEPARENT })
          .then((id) => void committed.set(next, id));
        await inFlight;
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    })();
    const retire = async (app: TestingModule) => {
      writers.splice(writers.indexOf(app), 1);
      await inFlight; // its last write committed (or failed) before it closes
      await close(app);
    };
    const writesFor = async (count: number) => {
      const until = seq + count;
      await eventually(() => seq >= until, 120_000, 20);
    };

    // 1. The polling relay, Debezium reading beside it (the deployment of the connector).
    const poll1 = await writerApp('poll');
    writers.push(poll1);
    await writesFor(20);
    // 2. Rolling deploy to relay.mode 'external': both kinds of instance write for a while.
    const external = await writerApp('external');
    writers.push(external);
    await writesFor(20);
    await retire(poll1);
    await writesFor(20);
    // 3. Debezium alone; its worker killed (no offset commit) and started again while the service writes.
    await live.kill();
    await writesFor(20);
    await live.restart();
    await writesFor(20);
    // 4. Back: a polling instance deployed beside the external one, which then goes.
    const poll2 = await writerApp('poll');
    writers.push(poll2);
    await writesFor(20);
    await retire(external);
    // 5. Debezium stops only once it confirmed everything the external instance wrote.
    await live.waitUntilConfirmed(await live.walPosition());
    await writesFor(10);
    await live.stop();
    await writesFor(20);
    stopped = true;
    await load;

    // Nothing lost, nothing applied twice; some messages did come twice (the overlaps, the crash).
    const ids = [...committed.values()];
    await eventually(
      async () => {
        const applied = await appliedCounts();
        expect(ids.filter((id) => !applied.has(id))).toEqual([]);
      },
      120_000,
      500,
    );
    const applied = await appliedCounts();
    expect(ids.filter((id) => applied.get(id) !== 1)).toEqual([]);
    const records = await (await reader()).settle(60_000);
    const copies = new Map<string, number>();
    for (const r of records) copies.set(r.headers['msg.id'], (copies.get(r.headers['msg.id']) ?? 0) + 1);
    const twice = ids.filter((id) => (copies.get(id) ?? 0) > 1).length;
    expect(twice).toBeGreaterThan(0);
    await eventually(async () =>
      expect(await db.query('select id from messaging_outbox where sent_at is null')).toEqual([]),
    );
    process.stdout.write(
      `Debezium switch: ${committed.size} messages committed, each applied once; ${twice} came more than once.\n`,
    );
    await close(poll2);
  }, 900_000);
});
