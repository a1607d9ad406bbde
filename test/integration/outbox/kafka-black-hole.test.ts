import { TestingModule } from '@nestjs/testing';
import { MESSAGING_TRANSPORT, MessageTransport } from 'nest-reliable-messaging/testing';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { ProxiedKafka, startProxiedKafka } from '../../harness/proxied';
import { createTestDatabase, TestDatabase } from '../../harness/test-database';
import { createMessagingApp } from '../support/messaging-app';
import { orderMessage } from '../support/raw-messages';

/**
 * Guide 07: a host that disappears without closing its connections (power, a partition) makes requests fail
 * only after the connect timeout (3 s) or kafkajs's request timeout (10 s). A private broker behind a fault
 * proxy that swallows every byte and tells neither side: a publish to it fails, not sooner than the request
 * timeout and not much later.
 */
describe('Kafka publishing into a host that disappeared (kafkajs, black-holed proxy)', () => {
  let kafka: ProxiedKafka;
  let topics: KafkaTopics;
  let db: TestDatabase;
  let app: TestingModule;

  beforeAll(async () => {
    kafka = await startProxiedKafka();
    topics = new KafkaTopics(testKafka(kafka.directBrokers));
    db = await createTestDatabase('postgres', 'kafka_black_hole');
    app = await createMessagingApp({
      schema: db,
      transport: { kind: 'kafka', brokers: kafka.brokers },
      messaging: { relay: { enabled: false } },
    });
  }, 240_000);

  afterAll(async () => {
    await kafka?.proxy.heal();
    await app?.close();
    await db?.drop();
    await topics?.cleanup();
    await kafka?.destroy();
  }, 120_000);

  // claim: C-60
  it('fails a publish after the request timeout, not before and not never', async () => {
    const topic = await topics.create(uniqueName('black_hole'), 1);
    const transport = app.get<MessageTransport>(MESSAGING_TRANSPORT);
    await transport.ensureDestinations([topic]);
    const [warm] = await transport.publish([orderMessage(topic, { customer: 'k', seq: 0 })]);
    expect(warm.status).toBe('CONFIRMED');

    kafka.proxy.blackHole(undefined, { silent: true });
    const started = Date.now();
    const [outcome] = await transport.publish([orderMessage(topic, { customer: 'k', seq: 1 })]);
    const elapsed = Date.now() - started;
    process.stdout.write(`\n[kafka-black-hole] publish ${outcome.status} after ${elapsed} ms\n`);
    expect(outcome.status).not.toBe('CONFIRMED');
    expect(elapsed).toBeGreaterThanOrEqual(9_000);
    expect(elapsed).toBeLessThan(90_000);
  }, 150_000);
});
