import { Logger } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { MessagingHealthIndicator } from 'nest-reliable-messaging';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { infraEnv } from '../../harness/infra';
import { startPrivateBroker } from '../../harness/kafka';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport, rabbitTransport } from '../support/messaging-app';

/**
 * Issue 27, point 5: a wrong broker password or address used to look like an outage: "successfully started",
 * retries for ever, a readiness that only said the broker did not answer. A refusal no retry changes is now
 * said once as an error naming the option to fix, and the health check says so (the app keeps retrying:
 * someone may fix the broker side).
 */
describe('A broker that refuses for good: said once, named, in the health check', () => {
  let schema: TestSchema;
  const apps: TestingModule[] = [];
  let privateBroker: KafkaBroker | undefined;

  beforeAll(async () => {
    schema = await createTestSchema('broker_refusal');
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await privateBroker?.destroy();
    await schema.drop();
  });

  const start = async (transport: Parameters<typeof createMessagingApp>[0]['transport']) => {
    const app = await createMessagingApp({
      schema: schema.name,
      transport,
      messaging: { relay: { enabled: false } },
    });
    apps.push(app);
    return app.get(MessagingHealthIndicator);
  };

  const errorsLogged = () => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

  it('RabbitMQ, a wrong password: down, permanent, fix transport.url; the password never shown', async () => {
    const url = new URL(infraEnv().amqpUrl);
    url.password = 'not-the-password-Xq7';
    const errors = errorsLogged();
    try {
      const health = await start(rabbitTransport(url.toString()));
      const results = [await health.broker(), await health.broker(), await health.broker()];
      for (const result of results) {
        expect(result.broker).toMatchObject({ status: 'down', permanent: true, fix: 'transport.url' });
      }
      expect(JSON.stringify(results)).not.toContain('Xq7');
      const said = errors.mock.calls
        .map(([line]) => String(line))
        .filter((l) => l.includes('ACCESS_REFUSED'));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain('Retrying will not help: fix transport.url.');
    } finally {
      errors.mockRestore();
    }
  });

  it("Kafka, the controller's port instead of the client listener: down, permanent, fix transport.brokers", async () => {
    // The local broker's controller listens on its port + 1 (tools/infra/kafka-broker.ts); elsewhere, a private one.
    const env = infraEnv();
    let controller: string;
    if (env.localKafka) {
      const [host, port] = env.kafkaBrokers[0].split(':');
      controller = `${host}:${Number(port) + 1}`;
    } else {
      privateBroker = await startPrivateBroker();
      controller = `127.0.0.1:${privateBroker.controllerPort}`;
    }
    const errors = errorsLogged();
    try {
      const health = await start(kafkaTransport([controller]));
      const result = await health.broker();
      expect(result.broker).toMatchObject({ status: 'down', permanent: true, fix: 'transport.brokers' });
      expect(String(result.broker.error)).toContain('not as a Kafka client listener');
      await health.broker();
      expect(errors.mock.calls.filter(([l]) => String(l).includes('client listener'))).toHaveLength(1);
    } finally {
      errors.mockRestore();
    }
  });

  it('an outage is not a refusal: a closed port stays "did not answer", without permanent', async () => {
    const health = await start(kafkaTransport(['127.0.0.1:1']));
    const result = await health.broker();
    expect(result.broker.status).toBe('down');
    expect(result.broker).not.toHaveProperty('permanent');
  });
});
