import { TestingModule } from '@nestjs/testing';
import { TransportOptions } from 'nest-reliable-messaging';
import { FaultProxy, Frame, FrameRule } from '../../harness/fault-proxy';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { ProxiedKafka, proxyUrl, startProxiedKafka } from '../../harness/proxied';
import { RabbitFixture } from '../../harness/rabbitmq';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createTestDatabase, TestDatabase, TestDialect } from '../../harness/test-database';
import { createLogicalSchema, startLogicalCluster } from '../support/logical-cluster';
import { createMessagingApp } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced, OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';

const CUSTOMERS = 4;
/** Orders placed at least; more while the faults have not all happened. */
const ORDERS = 40;

/** Which relay publishes: the outbox table's, or PostgreSQL's log (`relay.mode: 'logical'`). */
type Relay = 'poll' | 'logical';

/** A fault aimed at one link: a rule of its proxy. */
interface LinkFault {
  readonly name: string;
  readonly link: 'broker' | 'database';
  readonly rule: FrameRule;
}

const commitAnswer = (f: Frame) => f.direction === 'downstream' && /^\s*commit/i.test(f.query ?? '');
const markAnswer = (f: Frame) => f.direction === 'downstream' && /set sent_at/i.test(f.query ?? '');

const BROKER_FAULTS: Readonly<Record<'kafka' | 'rabbitmq', readonly LinkFault[]>> = {
  kafka: [
    {
      name: 'a produce written, its answer lost (the connection goes on)',
      link: 'broker',
      rule: { direction: 'downstream', match: (f) => f.apiKey === 0, action: 'drop' },
    },
    {
      name: 'a produce written, the connection cut before its answer',
      link: 'broker',
      rule: { direction: 'upstream', match: (f) => f.apiKey === 0, action: 'cut-after' },
    },
  ],
  rabbitmq: [
    {
      name: 'a publisher confirm lost with the connection',
      link: 'broker',
      rule: { direction: 'downstream', match: (f) => f.name === 'basic.ack', action: 'cut' },
    },
    {
      name: 'the connection cut mid-publish',
      link: 'broker',
      rule: { direction: 'upstream', match: (f) => f.name === 'basic.publish', action: 'cut-after' },
    },
    {
      name: 'a delivery lost with the connection, mid-consume',
      link: 'broker',
      rule: { direction: 'downstream', match: (f) => f.name === 'basic.deliver', action: 'cut' },
    },
    {
      name: "a consumer's ack lost with the connection",
      link: 'broker',
      rule: { direction: 'upstream', match: (f) => f.name === 'basic.ack', action: 'cut' },
    },
  ],
};

/** CopyData carrying a standby status update ('r'): the logical relay telling PostgreSQL what is published. */
const statusUpdate = (f: Frame) => f.direction === 'upstream' && f.bytes[0] === 0x64 && f.bytes[5] === 0x72;

/** The logical relay's database link: what it confirmed to PostgreSQL lost with the connection. */
const LOGICAL_DATABASE_FAULTS: readonly LinkFault[] = [
  {
    name: "the relay's status update lost with the replication connection, after the broker confirmed",
    link: 'database',
    rule: { direction: 'upstream', match: statusUpdate, action: 'cut' },
  },
  {
    name: "the answer to the consumer's COMMIT lost after the database executed it",
    link: 'database',
    rule: { direction: 'downstream', match: commitAnswer, action: 'cut' },
  },
];

const DATABASE_FAULTS: readonly LinkFault[] = [
  {
    name: "the answer to the relay's mark lost after the database executed it",
    link: 'database',
    rule: { direction: 'downstream', match: markAnswer, action: 'cut' },
  },
  {
    name: "the answer to the consumer's COMMIT lost after the database executed it",
    link: 'database',
    rule: { direction: 'downstream', match: commitAnswer, action: 'cut' },
  },
];

/**
 * Issue 26, ambiguous outcomes: a service that writes orders with the outbox, relays them and consumes them
 * (an inbox handler that records each order in its transaction), its broker and database links each behind a
 * fault proxy, while the proxies lose answers after the other side acted: one fault after the other, while
 * orders keep coming. Then: every order handled exactly once (the inbox absorbed the repeats), in order per
 * customer, every outbox row sent.
 */
describe('Answers lost after the broker or the database acted (fault proxies)', () => {
  let kafka: ProxiedKafka | undefined;
  let logicalCluster: PostgresCluster | undefined;
  const rabbit = new RabbitFixture();

  afterAll(async () => {
    await rabbit.cleanup();
    await kafka?.destroy();
    await logicalCluster?.destroy();
  }, 120_000);

  /** A database of the case's own: with the logical relay, a schema (and its slot) on a cluster with `wal_level = logical`. */
  async function caseDatabase(dialect: TestDialect, relay: Relay): Promise<TestDatabase> {
    if (relay === 'poll') return createTestDatabase(dialect, 'lost_answers');
    logicalCluster ??= await startLogicalCluster('lost-answers');
    return createLogicalSchema(logicalCluster, 'lost_answers');
  }

  const cases: Array<[string, 'kafka' | 'rabbitmq', TestDialect, readonly LinkFault[], Relay?]> = [
    ['Kafka, PostgreSQL: produce answers lost', 'kafka', 'postgres', BROKER_FAULTS.kafka],
    [
      'RabbitMQ, PostgreSQL: confirms, publishes, deliveries and acks lost',
      'rabbitmq',
      'postgres',
      BROKER_FAULTS.rabbitmq,
    ],
    [
      'RabbitMQ, PostgreSQL: the relay’s and the consumer’s database answers lost',
      'rabbitmq',
      'postgres',
      DATABASE_FAULTS,
    ],
    [
      'RabbitMQ, MariaDB: the relay’s and the consumer’s database answers lost',
      'rabbitmq',
      'mariadb',
      DATABASE_FAULTS,
    ],
    // The same proof for the logical relay (issue 38): its broker link, and its link to PostgreSQL's log.
    [
      'Kafka, PostgreSQL, the logical relay: produce answers lost',
      'kafka',
      'postgres',
      BROKER_FAULTS.kafka,
      'logical',
    ],
    [
      'RabbitMQ, PostgreSQL, the logical relay: confirms, publishes, deliveries and acks lost',
      'rabbitmq',
      'postgres',
      BROKER_FAULTS.rabbitmq,
      'logical',
    ],
    [
      'RabbitMQ, PostgreSQL, the logical relay: its status updates and the consumer’s database answers lost',
      'rabbitmq',
      'postgres',
      LOGICAL_DATABASE_FAULTS,
      'logical',
    ],
    [
      'Kafka, PostgreSQL, the logical relay: its status updates and the consumer’s database answers lost',
      'kafka',
      'postgres',
      LOGICAL_DATABASE_FAULTS,
      'logical',
    ],
  ];

  // claim: C-23, C-32, C-41
  it.each(cases)(
    '%s: every order handled once, in order per customer',
    async (_, broker, dialect, faults, relay = 'poll') => {
      const destination = uniqueName('lost_answers');
      const group = uniqueName('g');
      const db = await caseDatabase(dialect, relay);
      const closing: Array<() => Promise<unknown>> = [() => db.drop()];
      try {
        const database = await proxyUrl(db.connection.url, dialect === 'postgres' ? 'postgres' : 'mysql');
        closing.unshift(() => database.proxy.close());
        const { transport, brokerProxy } = await brokerLink(broker, closing);
        if (broker === 'rabbitmq') rabbit.trackConsumer(destination, group);

        // The writer talks to the database directly; the relay and the consumer go through the proxies.
        const writer = await createMessagingApp({
          schema: db,
          transport,
          ...ordersWriter(destination),
          entities: [...ordersWriter(destination).entities, HandledOrder],
          messaging: { relay: { enabled: false, mode: relay } },
        });
        closing.unshift(() => writer.close());
        const proxiedDb: TestDatabase = { ...db, connection: { ...db.connection, url: database.url } };
        const service = await createMessagingApp({
          schema: proxiedDb,
          transport,
          migrate: false,
          entities: [HandledOrder],
          providers: [
            { provide: ConsumerProbe, useValue: new ConsumerProbe() },
            ordersConsumer(orderPlaced(destination), group),
          ],
          messaging: {
            relay: { leaseMs: 3_000, pollIntervalMs: 250, mode: relay, retryMaxDelayMs: 1_000 },
            consumers: { concurrency: 2 },
          },
        });
        closing.unshift(() => service.close());

        const proxies = { broker: brokerProxy, database: database.proxy };
        const injected = oneAfterAnother(faults, proxies);
        const placed = await placeOrders(writer, injected.done);
        const hits = await injected.all;
        expect(hits.map((h) => h.fault)).toEqual(faults.map((f) => f.name));

        // The logical relay has no rows (but for parked ones): what was placed is checked against what was handled.
        const rows =
          relay === 'logical'
            ? []
            : await waitUntil(
                'every outbox row is sent',
                async () => {
                  const all = await readOutboxRows(db);
                  return all.length === placed && all.every((r) => r.sentAt !== null) && all;
                },
                120_000,
              );
        const handled = await waitUntil(
          'every order is handled',
          async () => {
            const all = await db.query<{ message_id: string; customer: string; seq: number }>(
              'select message_id, customer, seq from handled_orders where consumer_group = $1 order by id',
              [group],
            );
            return new Set(all.map((h) => h.message_id)).size === placed && all;
          },
          120_000,
        );
        expect(handled).toHaveLength(placed); // once each: the inbox absorbed every repeat
        if (relay === 'poll')
          expect(new Set(handled.map((h) => h.message_id))).toEqual(new Set(rows.map((r) => r.messageId)));
        else expect(await readOutboxRows(db)).toEqual([]); // nothing parked: every message went through the log
        for (let c = 0; c < CUSTOMERS; c++) {
          const seqs = handled.filter((h) => h.customer === `customer-${c}`).map((h) => Number(h.seq));
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        }
      } finally {
        for (const close of closing) await close().catch(() => undefined);
      }
    },
    300_000,
  );

  /** The transport options through a proxy in front of the broker (Kafka: a private broker, made once). */
  async function brokerLink(
    broker: 'kafka' | 'rabbitmq',
    closing: Array<() => Promise<unknown>>,
  ): Promise<{ transport: TransportOptions; brokerProxy: FaultProxy }> {
    if (broker === 'kafka') {
      kafka ??= await startProxiedKafka();
      closing.unshift(() => kafka!.proxy.heal());
      return { transport: { kind: 'kafka', brokers: kafka.brokers }, brokerProxy: kafka.proxy };
    }
    const link = await proxyUrl(infraEnv().amqpUrl, 'amqp');
    closing.unshift(() => link.proxy.close());
    return { transport: { kind: 'rabbitmq', url: link.url }, brokerProxy: link.proxy };
  }
});

/** Installs each fault once the one before has happened; `done` resolves when the last one has. */
function oneAfterAnother(
  faults: readonly LinkFault[],
  proxies: Record<LinkFault['link'], FaultProxy>,
): { done: Promise<void>; all: Promise<Array<{ fault: string; frame: Frame }>> } {
  const all = (async () => {
    const hits: Array<{ fault: string; frame: Frame }> = [];
    for (const fault of faults) {
      const [frame] = await proxies[fault.link].on(fault.rule);
      hits.push({ fault: fault.name, frame });
    }
    return hits;
  })();
  return { all, done: all.then(() => undefined) };
}

/** Places orders round-robin over the customers, at least `ORDERS`, and on until `faultsDone`; returns how many. */
async function placeOrders(writer: TestingModule, faultsDone: Promise<void>): Promise<number> {
  let finished = false;
  void faultsDone.then(() => (finished = true));
  const orders = writer.get(OrdersService);
  let seq = 0;
  while (seq < ORDERS || (!finished && seq < ORDERS * 10)) {
    seq += 1;
    await orders.place(`customer-${seq % CUSTOMERS}`, seq, seq);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.race([faultsDone, new Promise((resolve) => setTimeout(resolve, 60_000))]);
  return seq;
}
