import { INestApplicationContext } from '@nestjs/common';
import {
  MESSAGING_TRANSPORT,
  MessageTransport,
  OutboxRelay,
  WireMessage,
} from 'nest-reliable-messaging/testing';
import { createBenchApp } from '../lib/bench-app';
import { padding } from '../lib/bench-event';
import { BenchDialect, BenchOutbox, openBenchOutbox } from '../lib/bench-outbox';
import { benchName } from '../lib/databases';
import { TransportKind } from '../lib/plan';
import { rawPublisher, RawPublisher } from '../lib/raw-publishers';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize } from '../lib/stats';
import { now, within } from '../lib/time';

/** Issue 16's targets: ≥ 0.8× the raw producer on Kafka, ≥ 0.85× on RabbitMQ. */
const TARGET: Record<TransportKind, number> = { kafka: 0.8, rabbitmq: 0.85 };

/**
 * 1. Relay throughput: N pending outbox rows → broker, against the raw client publishing the very same
 * messages with the same batch size and guarantee. Runs alternate which goes first. Per broker and per
 * database (PostgreSQL, MariaDB): the raw client is the baseline of each.
 */
export const relayThroughput: Scenario = {
  name: 'throughput',
  steps: (plan) => plan.transports.length * plan.databases.length * plan.throughput.runs,
  async run(context) {
    for (const kind of context.plan.transports) {
      for (const dialect of context.plan.databases) await runOn(context, kind, dialect);
    }
  },
};

async function runOn(context: ScenarioContext, kind: TransportKind, dialect: BenchDialect): Promise<void> {
  const { rows, keys, payloadBytes, batchSize, runs } = context.plan.throughput;
  const { progress, brokers } = context;
  const destination = benchName(`bench_tp_${kind}`);
  const sinkQueue = `${destination}.sink`;
  const outbox: BenchOutbox = await openBenchOutbox(dialect, `tp_${kind}`, context.benchDbUrl);
  // RabbitMQ: a bound queue, or the broker returns the messages as unroutable.
  if (kind === 'rabbitmq') await brokers.exchange(destination, sinkQueue);
  else brokers.trackTopics(destination);

  let app: INestApplicationContext | undefined;
  let raw: RawPublisher | undefined;
  const pad = padding(payloadBytes);
  const relayRates: number[] = [];
  const rawRates: number[] = [];
  try {
    app = await createBenchApp({
      connection: outbox.connection,
      transport: kind,
      // Only the bench wakes it: the safety poll must not start a run early.
      relay: { batchSize, pollIntervalMs: 3_600_000 },
    });
    const relay = app.get(OutboxRelay);
    // The library creates the topic as it would in production (3 partitions).
    await app.get<MessageTransport>(MESSAGING_TRANSPORT).ensureDestinations([destination]);
    raw = await rawPublisher(kind);
    const reset = async () => {
      await outbox.truncate();
      if (kind === 'rabbitmq') await brokers.purgeQueue(sinkQueue);
    };

    // Warm-up: both connect, learn the destination and fill their caches once.
    await outbox.fill({ destination, rows: batchSize * 2, keys, pad, run: 'warmup' });
    await publishRaw(raw, await outbox.pendingWireMessages(), batchSize);
    await drainRelay(relay, batchSize * 2);
    await reset();

    for (let r = 0; r < runs; r++) {
      progress.step(`1. relay throughput ${outbox.label} → ${kind}, run ${r + 1}/${runs} (${rows} rows)`);
      await outbox.fill({ destination, rows, keys, pad, run: `tp${r}` });
      await outbox.analyze();
      const messages = await outbox.pendingWireMessages();
      const measureRaw = async () => {
        const ms = await publishRaw(raw as RawPublisher, messages, batchSize, (done) =>
          progress.update(done, rows, 'raw client'),
        );
        rawRates.push((rows * 1000) / ms);
        if (kind === 'rabbitmq') await brokers.purgeQueue(sinkQueue);
      };
      const measureRelay = async () => {
        const ms = await drainRelay(relay, rows, (done) => progress.update(done, rows, 'relay'));
        relayRates.push((rows * 1000) / ms);
        const left = await outbox.pendingCount();
        if (left > 0) throw new Error(`${left} rows still pending after the relay confirmed ${rows}`);
      };
      // Alternate the order so that neither always runs on a warmer (or busier) machine.
      if (r % 2 === 0) {
        await measureRaw();
        await measureRelay();
      } else {
        await measureRelay();
        await measureRaw();
      }
      await reset();
    }
  } finally {
    await raw?.close();
    await app?.close();
    await outbox.drop();
  }
  record(context, kind, outbox.label, relayRates, rawRates);
}

/** Publishes in batches, each confirmed before the next; returns the elapsed ms. */
async function publishRaw(
  raw: RawPublisher,
  messages: readonly WireMessage[],
  batchSize: number,
  onProgress?: (done: number) => void,
): Promise<number> {
  const started = now();
  for (let i = 0; i < messages.length; i += batchSize) {
    await raw.publish(messages.slice(i, i + batchSize));
    onProgress?.(Math.min(messages.length, i + batchSize));
  }
  return now() - started;
}

/** Wakes the relay and waits until it confirmed `rows` messages; returns the elapsed ms. */
async function drainRelay(
  relay: OutboxRelay,
  rows: number,
  onProgress?: (done: number) => void,
): Promise<number> {
  let confirmed = 0;
  let stop: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    stop = relay.onRound((round) => {
      confirmed += round.confirmed;
      onProgress?.(confirmed);
      if (confirmed >= rows) resolve();
    });
  });
  const started = now();
  relay.wake();
  try {
    await within(done, 120_000 + rows * 10, `relay draining ${rows} rows`);
  } finally {
    stop();
  }
  return now() - started;
}

function record(
  context: ScenarioContext,
  kind: TransportKind,
  database: string,
  relay: number[],
  raw: number[],
): void {
  const { rows, batchSize, payloadBytes, keys } = context.plan.throughput;
  const ours = summarize(relay);
  const baseline = summarize(raw);
  const r = ratio(ours.median, baseline.median);
  const client = kind === 'kafka' ? 'kafkajs producer (idempotent, acks=all)' : 'amqplib confirm channel';
  context.results.figures.push({
    scenario: '1. Relay throughput',
    name: `Relay ${database} → ${kind === 'kafka' ? 'Kafka' : 'RabbitMQ'} (${rows} rows of ${payloadBytes} B, ${keys} keys, batch ${batchSize})`,
    unit: 'msg/s',
    ours,
    baseline: { name: `raw ${client}, same messages and batches`, value: baseline },
    ratio: r,
    target: { text: `≥ ${TARGET[kind]}× raw`, met: r >= TARGET[kind] },
  });
}
