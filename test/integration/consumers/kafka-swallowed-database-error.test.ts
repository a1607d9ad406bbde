import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE } from '../../harness/test-database';
import { committedTotal } from '../support/kafka-wire';
import { kafkaTransport } from '../support/messaging-app';
import { orderMessage } from '../support/raw-messages';
import { useKafkaSuite } from '../support/suite-resources';
import {
  expectOthersApplied,
  expectSwallowedParked,
  SEQS,
  settledCount,
  startSwallowingApp,
  SwallowedFailure,
} from '../support/swallowing-consumer.fixture';
import { TopicReader } from '../support/topic-reader';

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
  const failure = new SwallowedFailure(dialect);
  afterAll(async () => failure.close());

  // claim: C-36
  test('fails the swallowing messages (dead-lettered) and applies every other one once, in key order', async () => {
    const topic = await suite.topics.create(uniqueName('kswallow'), PARTITIONS);
    const group = uniqueName('g');
    suite.topics.trackPrefix(`${topic}.${group}.`);
    const { schema } = suite;
    const transport = kafkaTransport();
    const { app, probe, open } = await startSwallowingApp({
      schema,
      transport,
      destination: topic,
      group,
      failure,
    });
    suite.apps.push(app);

    // Every handler waits until all 200 are written, so that the consumer takes them in batches.
    await suite.raw.send(SEQS.map((seq) => orderMessage(topic, { customer: `c${seq % 5}`, seq })));
    open();
    await eventually(async () => expect(await settledCount(app, group)).toBe(SEQS.length), 60_000);
    await eventually(async () => expect(await committedTotal(suite.kafka, group, topic)).toBe(SEQS.length));

    await expectOthersApplied(schema, group);
    const dlq = await new TopicReader(`${topic}.${group}.dlq`, suite.kafka).start();
    const parked = await dlq.settle();
    await dlq.stop();
    const seen = parked.map((r) => ({
      seq: (JSON.parse(r.value) as { seq: number }).seq,
      code: r.headers['msg.failure-code'],
    }));
    expectSwallowedParked(seen, failure, probe, dialect);
  });
});
