import { rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TestingModule } from '@nestjs/testing';
import { MessagingTopologyMissingError } from 'nest-reliable-messaging';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';

/**
 * `topology: 'verify'` (the default) on Kafka: a service checks that the topics its topology names exist and
 * stops at startup naming every missing one and how to declare it (guide 06); once an admin created exactly
 * those, it starts.
 */
describe('Kafka topology checked by the services (verify mode)', () => {
  const topics = new KafkaTopics();
  const destination = uniqueName('topo_kafka_orders');
  const group = 'billing';
  const probe = new ConsumerProbe();
  const apps: TestingModule[] = [];
  let schema: TestSchema;
  const topologyFile = path.join(os.tmpdir(), `${destination}.topology.json`);

  /** `nest-messaging topology check` as a developer runs it locally (the shared broker has no SASL). */
  const check = async () => {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { MESSAGING_ADMIN_KAFKA_BROKERS: infraEnv().kafkaBrokers.join(',') },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: os.tmpdir(),
    };
    const code = await runMessagingCli(
      ['topology', 'check', '--file', topologyFile, '--local-plaintext'],
      io,
    );
    return { code, out, err };
  };

  const app = () =>
    createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: probe },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false }, topology: 'verify' },
    });

  const listTopics = async (): Promise<string[]> => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      return await admin.listTopics();
    } finally {
      await admin.disconnect();
    }
  };

  beforeAll(async () => {
    schema = await createTestSchema('kafka_topology');
    writeFileSync(
      topologyFile,
      JSON.stringify({ destinations: [destination], groups: [{ group, destination, retryTiersMs: [] }] }),
    );
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await topics.cleanup();
    await schema?.drop();
    rmSync(topologyFile, { force: true });
  });

  // claim: C-19
  it('a service in verify mode stops at startup, naming every missing topic and how to declare it; starts once they exist; topology check exits 1, then 0', async () => {
    const error = await app().then(
      (started) => {
        apps.push(started);
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessagingTopologyMissingError);
    const missing = error as MessagingTopologyMissingError;
    expect(missing.transport).toBe('kafka');
    expect(missing.missing).toContain(`topic '${destination}'`);
    expect(missing.missing.some((m) => m.includes(`${destination}.${group}`) && m.includes('dlq'))).toBe(
      true,
    );
    expect(missing.message).toContain('nest-messaging topology apply');
    expect(await listTopics()).not.toContain(destination); // verify declares nothing
    const before = await check();
    expect(before.code).toBe(1);
    expect(before.err).toContain(`topic '${destination}'`);

    // An admin creates exactly what was named: the service starts.
    for (const entry of missing.missing) {
      const topic = /^topic '(.+)'$/.exec(entry)?.[1];
      expect(topic).toBeDefined();
      await topics.create(topic as string, 1);
    }
    apps.push(await app());
    expect(await check()).toMatchObject({ code: 0 });
  });
});
