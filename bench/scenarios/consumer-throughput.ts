import { benchWireMessages } from '../lib/bench-event';
import { publishInBatches } from '../lib/raw-publishers';
import { INestApplicationContext } from '@nestjs/common';
import { getRepositoryToken } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { decodeEnvelope, MESSAGING_TRANSPORT, MessageTransport } from 'nest-reliable-messaging/testing';

import { destinationNames } from 'nest-reliable-messaging/testing';
import { MESSAGING_RESOLVED_OPTIONS } from 'nest-reliable-messaging/testing';
import { ResolvedMessagingOptions } from 'nest-reliable-messaging/testing';
import { createBenchApp } from '../lib/bench-app';
import { benchEvent, benchPayloadSchema, padding } from '../lib/bench-event';
import { startInboxConsumerApp, trackConsumerDestinations } from '../lib/consumer-app';
import { BenchHandled, handleBenchMessage } from '../lib/consumer.fixture';
import { benchName, openClient } from '../lib/databases';
import { HandlerProbe } from '../lib/handler-probe';
import { TransportKind } from '../lib/plan';

import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize } from '../lib/stats';

/** Issue 16's target (issue 7's was 0.5). */
const TARGET = 0.8;
const RUN = 'consume';

/**
 * 5. Consumer throughput: M messages waiting on the broker, handled by the library's consumer (inbox records
 * and handlers of a lane's batch in one transaction) against the same handler without the inbox: the same
 * transport subscription, concurrency, decoding and validation, the handler's insert on its own, then the
 * ack. Beside them the library with `consumers.batchSize: 1` (a transaction per message), the price of
 * never running a handler again for another message's failure.
 */
export const consumerThroughput: Scenario = {
  name: 'consumer',
  steps: (plan) => plan.transports.length * plan.consumer.runs * VARIANTS.length,
  async run(context) {
    for (const kind of context.plan.transports) await runOn(context, kind);
  },
};

type Variant = 'inbox' | 'plain' | 'one-per-transaction';
const VARIANTS: readonly Variant[] = ['inbox', 'plain', 'one-per-transaction'];
const LABEL: Record<Variant, string> = {
  inbox: 'with inbox',
  plain: 'without inbox',
  'one-per-transaction': 'with inbox, batchSize 1',
};

async function runOn(context: ScenarioContext, kind: TransportKind): Promise<void> {
  const { plan, progress, brokers } = context;
  const { messages: count, runs } = plan.consumer;
  const schema = benchName(`cons_${kind}`);
  const destination = benchName(`bench_cons_${kind}`);
  const db = await openClient(context.benchDbUrl);
  await db.query(`create schema "${schema}"`);
  const messages = benchWireMessages(
    RUN,
    destination,
    count,
    plan.throughput.keys,
    padding(plan.throughput.payloadBytes),
  );
  const rates: Record<Variant, number[]> = { inbox: [], plain: [], 'one-per-transaction': [] };
  try {
    if (kind === 'kafka') {
      await brokers.topic(destination);
      await publishInBatches(kind, messages); // every run reads them from the start, in a group of its own
    }
    for (let r = 0; r < runs; r++) {
      const order = r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        progress.step(`5. consumer throughput ${kind}, ${LABEL[variant]}, run ${r + 1}`);
        const group = benchName(`bench_cons_${variant}`);
        trackConsumerDestinations(brokers, kind, destination, group);
        if (kind === 'rabbitmq') {
          // The group's queue exists before the messages are published, as it would in production.
          await brokers.exchange(destination, destinationNames.workQueue(destination, group));
          await publishInBatches(kind, messages);
        }
        const probe = new HandlerProbe();
        const stop =
          variant === 'plain'
            ? await startPlain(context, schema, kind, destination, group, probe)
            : await startInbox(
                context,
                schema,
                kind,
                destination,
                group,
                probe,
                variant === 'inbox' ? undefined : 1,
              );
        try {
          await probe.waitFor(RUN, count, 60_000, (done) => progress.update(done, count, 'handled'));
        } finally {
          await stop();
        }
        const starts = [...probe.startsOf(RUN).values()];
        rates[variant].push(((count - 1) * 1000) / (Math.max(...starts) - Math.min(...starts)));
        await db.query(`truncate "${schema}".bench_handled`);
      }
    }
  } finally {
    await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
    await db.end();
  }
  const broker = kind === 'kafka' ? 'Kafka' : 'RabbitMQ';
  const baseline = summarize(rates.plain);
  const ours = summarize(rates.inbox);
  const r = ratio(ours.median, baseline.median);
  context.results.figures.push({
    scenario: '5. Consumer throughput',
    name: `${broker} consumer with the inbox (${count} messages, concurrency 4)`,
    unit: 'msg/s',
    ours,
    baseline: { name: 'the same handler and subscription without the inbox', value: baseline },
    ratio: r,
    target: { text: `≥ ${TARGET}× without inbox`, met: r >= TARGET },
  });
  const single = summarize(rates['one-per-transaction']);
  context.results.figures.push({
    scenario: '5. Consumer throughput',
    name: `${broker} consumer with the inbox, \`consumers.batchSize: 1\` (a transaction per message)`,
    unit: 'msg/s',
    ours: single,
    baseline: { name: 'the same handler and subscription without the inbox', value: baseline },
    ratio: ratio(single.median, baseline.median),
  });
}

/** The library's consumer: `@IdempotentHandler`, inbox records and handlers in one transaction per batch. */
async function startInbox(
  context: ScenarioContext,
  schema: string,
  kind: TransportKind,
  destination: string,
  group: string,
  probe: HandlerProbe,
  batchSize: number | undefined, // undefined: the library's default
): Promise<() => Promise<void>> {
  const app = await startInboxConsumerApp({
    databaseUrl: context.benchDbUrl,
    schema,
    transport: kind,
    event: benchEvent(destination),
    group,
    probe,
    brokers: context.brokers,
    batchSize,
  });
  return () => app.close();
}

/** The same subscription through the library's transport, the handler run on its own, then the ack. */
async function startPlain(
  context: ScenarioContext,
  schema: string,
  kind: TransportKind,
  destination: string,
  group: string,
  probe: HandlerProbe,
): Promise<() => Promise<void>> {
  const app: INestApplicationContext = await createBenchApp({
    databaseUrl: context.benchDbUrl,
    schema,
    transport: kind,
    serviceName: 'bench-plain-consumer',
    relay: { enabled: false },
    entities: [BenchHandled],
  });
  const transport = app.get<MessageTransport>(MESSAGING_TRANSPORT);
  const options = app.get<ResolvedMessagingOptions>(MESSAGING_RESOLVED_OPTIONS);
  const handled = app.get<Repository<BenchHandled>>(getRepositoryToken(BenchHandled));
  const handle = await transport.subscribe({
    group,
    destinations: [destination],
    retryTiers: {},
    concurrency: options.consumers.concurrency,
    // One lane's deliveries one after another, as the library's pipeline runs them (without a transaction).
    onDeliveries: async (deliveries, control) => {
      const settlements: Array<{ kind: 'ACK' | 'LEAVE' }> = [];
      for (const delivery of deliveries) {
        if (control.isStopping() || control.isHalted?.()) {
          settlements.push({ kind: 'LEAVE' });
          continue;
        }
        const decoded = decodeEnvelope(delivery.wire);
        if (!decoded.ok) throw new Error(`undecodable bench message: ${decoded.failure.code}`);
        const payload = benchPayloadSchema.parse(decoded.envelope.payload);
        await handleBenchMessage(handled, probe, payload, decoded.envelope.messageId);
        settlements.push({ kind: 'ACK' });
      }
      return settlements;
    },
  });
  return async () => {
    await handle.stop();
    await app.close();
  };
}
