import { Admin } from 'kafkajs';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { eventually } from '../../harness/eventually';
import { startPrivateBroker, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RawKafkaProducer } from '../support/kafka-wire';
import { ordersConsumerApp } from '../support/orders-consumer-app';
import { ConsumerProbe } from '../support/orders-consumer.fixture';
import { orderMessage } from '../support/raw-messages';

/**
 * A session far longer than the test waits for anything: a consumer that came back as a new member would
 * wait this long for its old membership to expire before it got partitions again.
 */
const SESSION_TIMEOUT_MS = 120_000;

/**
 * After a Kafka broker restart the consumer takes its partitions back at once: its group does not wait for
 * a membership from before the restart to time out.
 */
describe('Kafka consumer across a broker restart', () => {
  let schema: TestSchema;
  let broker: KafkaBroker;
  let admin: Admin;

  beforeAll(async () => {
    schema = await createTestSchema('kafka_broker_restart');
    broker = await startPrivateBroker();
  });

  afterAll(async () => {
    await admin?.disconnect().catch(() => undefined);
    await broker?.destroy();
    await schema?.drop();
  });

  const members = async (group: string): Promise<string[]> => {
    admin ??= testKafka(broker.brokers).admin();
    await admin.connect();
    const { groups } = await admin.describeGroups([group]);
    return groups[0].members.map((m) => m.memberId);
  };

  // claim: C-59
  it('rejoins its group as the member it was and resumes delivery', async () => {
    const destination = uniqueName('restart');
    const group = uniqueName('g');
    const probe = new ConsumerProbe();
    const app = await ordersConsumerApp(schema.name, {
      transport: { kind: 'kafka', brokers: broker.brokers, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      destination,
      group,
      probe,
    });
    const send = async (seq: number) => {
      const raw = new RawKafkaProducer(testKafka(broker.brokers));
      await raw.send([orderMessage(destination, { customer: 'k', seq })]);
      await raw.stop();
    };
    try {
      await send(1);
      await eventually(() => probe.invocations >= 1);
      const before = await members(group);
      expect(before).toHaveLength(1);
      await admin.disconnect();

      await broker.stop();
      const startedAt = Date.now();
      await broker.start();
      const servingAt = Date.now();
      await send(2);
      await eventually(() => probe.invocations >= 2, 90_000);
      const deliveredAt = Date.now();
      console.log(
        `[kafka-broker-restart] start command → serving ${servingAt - startedAt} ms, ` +
          `→ delivered ${deliveredAt - startedAt} ms (${deliveredAt - servingAt} ms after serving)`,
      );
      // Not a new member waiting for the old one to time out: the same member, alone in its group.
      expect(await members(group)).toEqual(before);
    } finally {
      await app.close();
    }
  });
});
