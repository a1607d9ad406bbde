import { TestingModule } from '@nestjs/testing';
import * as kafkajs from 'kafkajs';
import { MessagingHealthIndicator } from 'nest-reliable-messaging';
import { freePort } from '../../harness/kafka';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';

/**
 * Issue 15, point 9: `/health` is polled by load balancers every few seconds. It must not open a new Kafka
 * client (and connection) on every call, and must not hand raw error text (hosts, ports, driver messages)
 * to whoever can reach the port.
 */
describe('Health checks: one Kafka client, no raw error text', () => {
  let schema: TestSchema;
  const apps: TestingModule[] = [];

  beforeAll(async () => {
    schema = await createTestSchema('health_checks');
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await schema.drop();
  });

  const start = async (brokers?: string[]) => {
    const app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(brokers),
      messaging: { relay: { enabled: false } },
    });
    apps.push(app);
    return app.get(MessagingHealthIndicator);
  };

  it('checks the broker many times over one client', async () => {
    const health = await start();
    const admins = jest.spyOn(kafkajs.Kafka.prototype, 'admin');
    const connects: number[] = [];
    for (let i = 0; i < 5; i++) {
      expect((await health.broker()).broker.status).toBe('up');
      connects.push(admins.mock.calls.length);
    }
    admins.mockRestore();
    expect(connects.at(-1)).toBeLessThanOrEqual(1);
  });

  it('reports a broker that is down without its error text', async () => {
    const port = await freePort(); // nothing listens there: the client's error names host, port and errno
    const health = await start([`127.0.0.1:${port}`]);
    const result = await health.broker();
    expect(result.broker.status).toBe('down');
    expect(JSON.stringify(result)).not.toMatch(new RegExp(`${port}|127\\.0\\.0\\.1|ECONN|KafkaJS`));
  });
});
