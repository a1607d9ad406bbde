import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE } from '../../harness/test-database';
import { DeadlockBallast, DeadlockRow, InnodbDeadlock, isDeadlock } from '../support/innodb-deadlock';
import { committedTotal } from '../support/kafka-wire';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { useKafkaSuite } from '../support/suite-resources';
import {
  AppliedOrder,
  FailingStatement,
  SwallowProbe,
  swallowingConsumer,
  settledCount,
  TakenKey,
} from '../support/swallowing-consumer.fixture';
import { TopicReader } from '../support/topic-reader';

const SEQS = Array.from({ length: 200 }, (_, i) => i + 1);
/** Every tenth message's handler swallows a database error that ended its transaction. */
const SWALLOWING = SEQS.filter((seq) => seq % 10 === 0);
const OTHERS = SEQS.filter((seq) => seq % 10 !== 0);
const PARTITIONS = 3;

/**
 * Issue 26, defect 1, on Kafka: the batch's offsets are committed as one contiguous range, so a message whose
 * transaction the database ended (a swallowed unique violation on PostgreSQL, a deadlock on MariaDB) must not
 * be taken as handled, nor may its neighbours in the batch lose their writes. The RabbitMQ variant
 * (swallowed-database-error.test.ts) is the one shown failing before the fix; this one holds Kafka's
 * settlement (offsets committed only past what is applied or dead-lettered) to the same outcome.
 */
describe.each(EACH_DATABASE)('A handler that swallows a database error (%s, Kafka)', (_, dialect) => {
  const suite = useKafkaSuite('kswallowed', dialect);
  let deadlock: InnodbDeadlock | undefined;
  afterAll(async () => deadlock?.close());

  const failing: FailingStatement =
    dialect === 'postgres'
      ? async (manager, key) => void (await manager.insert(TakenKey, { key }))
      : (manager, key) => (deadlock as InnodbDeadlock).provoke(manager, key);

  test('fails the swallowing messages (dead-lettered) and applies every other one once, in key order', async () => {
    const topic = await suite.topics.create(uniqueName('kswallow'), PARTITIONS);
    const group = uniqueName('g');
    suite.topics.trackPrefix(`${topic}.${group}.`);
    const keys = SWALLOWING.map((seq) => `${group}:${seq}`);
    const probe = new SwallowProbe();
    let open = () => undefined as void;
    probe.gate = new Promise<void>((resolve) => (open = resolve));
    const app = await createMessagingApp({
      schema: suite.schema,
      transport: kafkaTransport(),
      entities: [AppliedOrder, TakenKey, DeadlockRow, DeadlockBallast],
      providers: [
        { provide: SwallowProbe, useValue: probe },
        swallowingConsumer(orderPlaced(topic), group, failing),
      ],
      messaging: { relay: { enabled: false } },
    });
    suite.apps.push(app);
    if (dialect === 'postgres') {
      for (const key of keys) await suite.schema.query('insert into swallow_taken (key) values ($1)', [key]);
    } else {
      deadlock ??= new InnodbDeadlock(suite.schema);
      await deadlock.prepare(keys);
    }

    // Every handler waits until all 200 are written, so that the consumer takes them in batches.
    await suite.raw.send(SEQS.map((seq) => orderMessage(topic, { customer: `c${seq % 5}`, seq })));
    open();
    await eventually(async () => expect(await settledCount(app, group)).toBe(SEQS.length), 60_000);
    await eventually(async () => expect(await committedTotal(suite.kafka, group, topic)).toBe(SEQS.length));

    const rows = await suite.schema.query<{ seq: number }>(
      'select seq from swallow_applied where consumer_group = $1 order by id',
      [group],
    );
    const applied = rows.map((row) => Number(row.seq));
    expect([...applied].sort((a, b) => a - b)).toEqual(OTHERS);
    for (let customer = 0; customer < 5; customer++) {
      const ofCustomer = applied.filter((seq) => seq % 5 === customer);
      expect(ofCustomer).toEqual([...ofCustomer].sort((a, b) => a - b));
    }
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, suite.kafka).start();
    const parked = await dlq.settle();
    await dlq.stop();
    const parkedSeqs = parked.map((r) => (JSON.parse(r.value) as { seq: number }).seq);
    expect(parkedSeqs.sort((a, b) => a - b)).toEqual(SWALLOWING);
    const code = dialect === 'postgres' ? '23505' : 'ER_LOCK_DEADLOCK';
    expect([...new Set(parked.map((r) => r.headers['msg.failure-code']))]).toEqual([
      `TransactionAbortedError/${code}`,
    ]);
    for (const seq of OTHERS) expect(probe.calls.get(seq)).toBeLessThanOrEqual(2);
    expect(probe.swallowed.length).toBeGreaterThanOrEqual(SWALLOWING.length);
    if (dialect === 'mariadb') expect(probe.swallowed.filter((e) => !isDeadlock(e)).map(String)).toEqual([]);
  });
});
