import { MessagingStatus, MessagingStatusSnapshot } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { FaultProxy } from '../../harness/fault-proxy';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { useRabbitSuite } from '../support/suite-resources';

/**
 * README step 5: `MessagingStatus` is a liveness snapshot without I/O. A consumer app on RabbitMQ, reached
 * through a proxy: the snapshot names the running group and the connection; with the broker unreachable it
 * still answers at once (synchronously), saying the connection is down and why; it says so again once the
 * broker is back.
 */
describe('MessagingStatus (RabbitMQ through a proxy)', () => {
  const suite = useRabbitSuite('messaging_status');
  const { rabbit, apps } = suite;
  let proxy: FaultProxy | undefined;

  afterAll(async () => {
    await proxy?.close();
  });

  // claim: C-88
  it('answers synchronously with the running groups and the connection as last seen, also while the broker is away', async () => {
    const broker = new URL(infraEnv().amqpUrl);
    proxy = await FaultProxy.start({
      target: { host: broker.hostname, port: Number(broker.port || 5672) },
      protocol: 'amqp',
    });
    const viaProxy = new URL(infraEnv().amqpUrl);
    viaProxy.host = proxy.address;
    const destination = uniqueName('status');
    const group = uniqueName('g');
    rabbit.track({
      exchanges: [destination],
      queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
    });
    const app = await createMessagingApp({
      schema: suite.schema.name,
      transport: rabbitTransport(viaProxy.toString()),
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: new ConsumerProbe() },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { relay: { enabled: false } },
    });
    apps.push(app);
    const status = app.get(MessagingStatus);
    const snapshot = (): MessagingStatusSnapshot => {
      const value: unknown = status.snapshot();
      expect(value).not.toBeInstanceOf(Promise);
      return value as MessagingStatusSnapshot;
    };

    await eventually(() =>
      expect(snapshot()).toEqual({
        transport: { kind: 'rabbitmq', connected: true },
        consumers: [group],
        joining: [],
      }),
    );

    await proxy.refuse();
    expect(proxy.cutAll()).toBeGreaterThan(0);
    const away = await eventually(() => {
      const now = snapshot();
      expect(now.transport.connected).toBe(false);
      return now;
    });
    expect(away.transport.kind).toBe('rabbitmq');
    expect(typeof away.transport.lastError).toBe('string');
    // Without I/O: a thousand snapshots while the broker cannot be reached take next to no time.
    const started = performance.now();
    for (let i = 0; i < 1_000; i++) snapshot();
    expect(performance.now() - started).toBeLessThan(1_000);

    await proxy.heal();
    await eventually(
      () =>
        expect(snapshot()).toEqual({
          transport: { kind: 'rabbitmq', connected: true },
          consumers: [group],
          joining: [],
        }),
      60_000,
    );
  });
});
