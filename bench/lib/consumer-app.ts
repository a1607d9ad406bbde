import { INestApplicationContext } from '@nestjs/common';
import { destinationNames } from 'nest-reliable-messaging/testing';
import { createBenchApp } from './bench-app';
import { BenchEvent } from './bench-event';
import { BrokerFixtures } from './brokers';
import { BenchHandled, inboxConsumer } from './consumer.fixture';
import { HandlerProbe } from './handler-probe';
import { TransportKind } from './plan';

/**
 * An application that only consumes (no relay): the library's consumer of `event` in `group`, recording
 * each handler start in `probe`. The topic, queues and dead-letter destination it declares are tracked for
 * deletion.
 */
export async function startInboxConsumerApp(options: {
  databaseUrl: string;
  schema: string;
  transport: TransportKind;
  event: BenchEvent;
  group: string;
  probe: HandlerProbe;
  brokers: BrokerFixtures;
  /** `consumers.batchSize`; the library's default when not given. */
  batchSize?: number;
}): Promise<INestApplicationContext> {
  const { event, group, brokers } = options;
  trackConsumerDestinations(brokers, options.transport, event.destination, group);
  return createBenchApp({
    databaseUrl: options.databaseUrl,
    schema: options.schema,
    transport: options.transport,
    serviceName: 'bench-consumer',
    relay: { enabled: false },
    consumers: options.batchSize === undefined ? undefined : { batchSize: options.batchSize },
    entities: [BenchHandled],
    providers: [{ provide: HandlerProbe, useValue: options.probe }, inboxConsumer(event, group)],
  });
}

/** What a subscription of `group` to `destination` declares on the broker. */
export function trackConsumerDestinations(
  brokers: BrokerFixtures,
  kind: TransportKind,
  destination: string,
  group: string,
): void {
  const deadLetter = destinationNames.deadLetter(destination, group);
  if (kind === 'kafka') brokers.trackTopics(destination, deadLetter);
  else brokers.trackQueues(destinationNames.workQueue(destination, group), deadLetter);
}
