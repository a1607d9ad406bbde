/**
 * A consumer application in a process of its own, for tests that SIGKILL it. Configured by environment:
 * SCHEMA, DESTINATION, GROUP, TRANSPORT (kafka|rabbitmq), DELAY_MS, and optionally POLICY (a retry policy as
 * JSON), ALWAYS_FAIL (seqs, comma-separated), JITTER=max (every backoff draws its longest delay) and
 * SESSION_TIMEOUT_MS (Kafka's session timeout, default 8000), START_WHEN (a file: once its modules are
 * loaded it prints LOADED and starts when the file exists). With HTTP_PORT it is also the producer: it
 * serves `POST /orders` there (an order and its event through the outbox, relayed by it). Prints
 * READY once consuming, and `ATTEMPT <message id> <attempt>` on each handler invocation.
 * Run with: node -r ts-node/register/transpile-only -r tsconfig-paths/register consumer-process.ts
 */
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { RetryPolicyOptions } from 'nest-reliable-messaging';
import { systemClock } from 'nest-reliable-messaging/testing';
import { ConsumerProbe, HandledOrder, ordersConsumer } from './orders-consumer.fixture';
import { infraEnv } from '../../harness/infra';
import { createMessagingApp, rabbitTransport } from './messaging-app';
import { orderPlaced, ordersWriter } from './orders.fixture';
import { OrdersHttpController } from './orders-http.fixture';

async function main(): Promise<void> {
  // START_WHEN=<file>: loaded, it waits for the file before it starts (a restart timed without ts-node).
  if (process.env.START_WHEN) {
    process.stdout.write('LOADED\n');
    while (!existsSync(process.env.START_WHEN)) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const env = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is required`);
    return value;
  };
  const probe = new ConsumerProbe();
  probe.delayMs = Number(process.env.DELAY_MS ?? 0);
  for (const seq of (process.env.ALWAYS_FAIL ?? '').split(',').filter(Boolean))
    probe.alwaysFail.add(Number(seq));
  probe.onInvocation = (context) => process.stdout.write(`ATTEMPT ${context.messageId} ${context.attempt}\n`);
  const policy = process.env.POLICY ? (JSON.parse(process.env.POLICY) as RetryPolicyOptions) : undefined;
  const httpPort = process.env.HTTP_PORT ? Number(process.env.HTTP_PORT) : undefined;
  const writer = httpPort === undefined ? undefined : ordersWriter(env('DESTINATION'));
  const app = await createMessagingApp({
    schema: env('SCHEMA'),
    // A short session lets the restarted consumer take the killed one's partitions sooner.
    transport:
      env('TRANSPORT') === 'rabbitmq'
        ? rabbitTransport()
        : {
            kind: 'kafka',
            brokers: infraEnv().kafkaBrokers,
            sessionTimeoutMs: Number(process.env.SESSION_TIMEOUT_MS ?? 8_000),
          },
    // JITTER=max: the library's clock draws the longest delay every backoff allows.
    clock: process.env.JITTER === 'max' ? { ...systemClock, random: () => 0.999_999 } : undefined,
    entities: [HandledOrder, ...(writer?.entities ?? [])],
    providers: [
      { provide: ConsumerProbe, useValue: probe },
      ordersConsumer(orderPlaced(env('DESTINATION')), env('GROUP'), policy),
      ...(writer?.providers ?? []),
    ],
    controllers: writer ? [OrdersHttpController] : [],
    listen: httpPort,
    messaging: {
      serviceName: env('GROUP'),
      relay: { enabled: writer !== undefined },
      consumers: { concurrency: 3 },
    },
  });
  // The handler before READY: a test may signal as soon as it reads it (see instrumented-app.ts).
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
  process.stdout.write('READY\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
