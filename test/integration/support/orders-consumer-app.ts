import { TestingModule } from '@nestjs/testing';
import { MessagingStatus, RetryPolicyOptions, TransportOptions } from 'nest-reliable-messaging';
import { createMessagingApp, MessagingAppOptions } from './messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from './orders-consumer.fixture';
import { orderPlaced } from './orders.fixture';
import { SuiteResources } from './suite-resources';

/** What `startOrdersConsumer` starts: where, as which group, under which policy and options. */
export interface OrdersConsumerOptions {
  transport: TransportOptions;
  destination: string;
  group: string;
  /** The handler's `@RetryPolicy` (none: the destination's default or the library's). */
  policy?: RetryPolicyOptions;
  probe?: ConsumerProbe;
  /** Merged over "no relay" (these suites publish raw messages, not through the outbox). */
  messaging?: MessagingAppOptions['messaging'];
}

/**
 * Starts an app in `schema` whose orders consumer (`ordersConsumer`, recording into `handled_orders`) handles
 * `orderPlaced(destination)` as `group`; the caller closes it.
 */
export function ordersConsumerApp(
  schema: MessagingAppOptions['schema'],
  options: OrdersConsumerOptions,
): Promise<TestingModule> {
  return createMessagingApp({
    schema,
    transport: options.transport,
    entities: [HandledOrder],
    providers: [
      { provide: ConsumerProbe, useValue: options.probe ?? new ConsumerProbe() },
      ordersConsumer(orderPlaced(options.destination), options.group, options.policy),
    ],
    messaging: { relay: { enabled: false }, ...options.messaging },
  });
}

/** `ordersConsumerApp` in the suite's schema; the suite closes it after its tests. */
export async function startOrdersConsumer(
  suite: SuiteResources,
  options: OrdersConsumerOptions,
): Promise<TestingModule> {
  const app = await ordersConsumerApp(suite.schema, options);
  suite.apps.push(app);
  await consumersJoined(app);
  return app;
}

/**
 * Waits until the app's consumer groups have joined: bootstrap no longer waits for a Kafka group to join
 * (issue 37), and these suites publish at once, expecting the group to take part from the first message (a
 * retry tier joining later rebalanced the group while the first messages were handled: kafka-retry's
 * ALLOW_REORDER case failed in CI).
 */
export async function consumersJoined(app: TestingModule, timeoutMs = 60_000): Promise<void> {
  await app.get(MessagingStatus).consumersJoined(timeoutMs);
}
