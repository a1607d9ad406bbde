import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { startPrivateBroker, testKafka } from '../../harness/kafka';

/** The outage tests rely on this: a broker stopped and started again keeps its data. */
describe('Kafka broker stop and start (smoke, private broker)', () => {
  let broker: KafkaBroker;

  beforeAll(async () => {
    broker = await startPrivateBroker();
  });

  afterAll(async () => {
    await broker.destroy();
  });

  it('delivers after a restart a message produced before the stop', async () => {
    const kafka = testKafka(broker.brokers);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'restart', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic: 'restart', acks: -1, messages: [{ key: 'k', value: 'before the stop' }] });
    await producer.disconnect();

    expect(await broker.stop()).toBe(true);
    expect(await broker.isAnswering(1_000)).toBe(false);
    const restart = await broker.start();
    expect(restart.reused).toBe(false);

    const consumer = testKafka(broker.brokers).consumer({ groupId: 'after-restart' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'restart', fromBeginning: true });
    const value = await new Promise<string>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(message.value?.toString() ?? '') });
    });
    await consumer.disconnect();
    expect(value).toBe('before the stop');
  });
});
