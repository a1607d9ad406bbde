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
import { KafkaClientName } from '../lib/kafka-clients';
import { BenchPlan, TransportKind } from '../lib/plan';
import { rawPublisher, RawPublisher } from '../lib/raw-publishers';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize } from '../lib/stats';
import { now, within } from '../lib/time';

/** Issue 16's targets: ≥ 0.8× the raw producer on Kafka, ≥ 0.85× on RabbitMQ. */
const TARGET: Record<TransportKind, number> = { kafka: 0.8, rabbitmq: 0.85 };

/**
 * One series of figure 1: a broker, a database, on Kafka the client the relay publishes with, and whether the
 * outbox keeps sent rows (the default) or deletes them once confirmed (`retention.sentRetentionMs: 0`).
 */
interface Series {
  readonly kind: TransportKind;
  readonly dialect: BenchDialect;
  readonly client: KafkaClientName;
  readonly keepSent: boolean;
}

/**
 * Per broker and database (PostgreSQL, MariaDB) with the library's defaults; on PostgreSQL also without sent
 * rows, and on Kafka and PostgreSQL also with `transport.producerClient: 'platformatic'` (with and without).
 */
function seriesOf(plan: BenchPlan): Series[] {
  return plan.transports.flatMap((kind) =>
    plan.databases.flatMap((dialect): Series[] => {
      if (dialect !== 'postgres') return [{ kind, dialect, client: 'kafkajs', keepSent: true }];
      const clients: KafkaClientName[] = kind === 'kafka' ? ['kafkajs', 'platformatic'] : ['kafkajs'];
      return clients.flatMap((client) => [
        { kind, dialect, client, keepSent: true },
        { kind, dialect, client, keepSent: false },
      ]);
    }),
  );
}

/**
 * 1. Relay throughput: N pending outbox rows → broker, against the raw client publishing the very same
 * messages with the same batch size and guarantee. Runs alternate which goes first. Per broker and per
 * database (PostgreSQL, MariaDB): the raw client is the baseline of each. The relay publishing with
 * @platformatic/kafka has its raw producer as its baseline, and kafkajs's raw producer beside it.
 */
export const relayThroughput: Scenario = {
  name: 'throughput',
  steps: (plan) => seriesOf(plan).length * plan.throughput.runs,
  async run(context) {
    for (const series of seriesOf(context.plan)) await runOn(context, series);
  },
};

async function runOn(context: ScenarioContext, series: Series): Promise<void> {
  const { kind, dialect, client, keepSent } = series;
  const { rows, keys, payloadBytes, batchSize, runs } = context.plan.throughput;
  const { progress, brokers } = context;
  const viaPlatformatic = client === 'platformatic';
  const destination = benchName(`bench_tp_${kind}${viaPlatformatic ? '_pl' : ''}${keepSent ? '' : '_del'}`);
  const sinkQueue = `${destination}.sink`;
  const outbox: BenchOutbox = await openBenchOutbox(dialect, `tp_${kind}`, context.benchDbUrl);
  // RabbitMQ: a bound queue, or the broker returns the messages as unroutable.
  if (kind === 'rabbitmq') await brokers.exchange(destination, sinkQueue);
  else brokers.trackTopics(destination);

  let app: INestApplicationContext | undefined;
  let raw: RawPublisher | undefined;
  let rawKafkajs: RawPublisher | undefined;
  const pad = padding(payloadBytes);
  const relayRates: number[] = [];
  const rawRates: number[] = [];
  const rawKafkajsRates: number[] = [];
  try {
    app = await createBenchApp({
      connection: outbox.connection,
      transport: kind,
      producerClient: viaPlatformatic ? 'platformatic' : undefined,
      // Only the bench wakes it: the safety poll must not start a run early.
      relay: { batchSize, pollIntervalMs: 3_600_000 },
      retention: keepSent ? undefined : { sentRetentionMs: 0 },
    });
    const relay = app.get(OutboxRelay);
    // The library creates the topic as it would in production (3 partitions).
    await app.get<MessageTransport>(MESSAGING_TRANSPORT).ensureDestinations([destination]);
    raw = await rawPublisher(kind, client);
    if (viaPlatformatic) rawKafkajs = await rawPublisher(kind, 'kafkajs');
    const reset = async () => {
      await outbox.truncate();
      if (kind === 'rabbitmq') await brokers.purgeQueue(sinkQueue);
    };

    // Warm-up: both connect, learn the destination and fill their caches once.
    await outbox.fill({ destination, rows: batchSize * 2, keys, pad, run: 'warmup' });
    const warmUp = await outbox.pendingWireMessages();
    await publishRaw(raw, warmUp, batchSize);
    if (rawKafkajs) await publishRaw(rawKafkajs, warmUp, batchSize);
    await drainRelay(relay, batchSize * 2);
    await reset();

    for (let r = 0; r < runs; r++) {
      progress.step(`1. relay throughput ${label(series)}, run ${r + 1}/${runs} (${rows} rows)`);
      await outbox.fill({ destination, rows, keys, pad, run: `tp${r}` });
      await outbox.analyze();
      const messages = await outbox.pendingWireMessages();
      const measureRaw = async () => {
        const ms = await publishRaw(raw as RawPublisher, messages, batchSize, (done) =>
          progress.update(done, rows, 'raw client'),
        );
        rawRates.push((rows * 1000) / ms);
        if (kind === 'rabbitmq') await brokers.purgeQueue(sinkQueue);
        if (rawKafkajs) {
          const kafkajsMs = await publishRaw(rawKafkajs, messages, batchSize, (done) =>
            progress.update(done, rows, 'raw kafkajs'),
          );
          rawKafkajsRates.push((rows * 1000) / kafkajsMs);
        }
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
    await rawKafkajs?.close();
    await app?.close();
    await outbox.drop();
  }
  record(context, { series, database: outbox.label }, relayRates, rawRates);
  if (viaPlatformatic) {
    record(context, { series, database: outbox.label, baseline: 'kafkajs' }, relayRates, rawKafkajsRates);
  }
}

function label({ kind, dialect, client, keepSent }: Series): string {
  const options = [
    ...(client === 'platformatic' ? ['@platformatic/kafka'] : []),
    ...(keepSent ? [] : ['sentRetentionMs 0']),
  ];
  return `${dialect} → ${kind}${options.length > 0 ? ` (${options.join(', ')})` : ''}`;
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

/** The figure's series; `baseline` names another raw client than the relay's own (measured beside it). */
interface Recorded {
  readonly series: Series;
  /** `PostgreSQL` or `MariaDB`. */
  readonly database: string;
  readonly baseline?: KafkaClientName;
}

const CLIENT_LABEL: Record<KafkaClientName, string> = {
  kafkajs: 'kafkajs',
  platformatic: '@platformatic/kafka',
};

function record(context: ScenarioContext, recorded: Recorded, relay: number[], raw: number[]): void {
  const { series, database } = recorded;
  const { kind, client, keepSent } = series;
  const { rows, batchSize, payloadBytes, keys } = context.plan.throughput;
  const ours = summarize(relay);
  const baseline = summarize(raw);
  const r = ratio(ours.median, baseline.median);
  const rawClient =
    kind === 'kafka'
      ? `${CLIENT_LABEL[recorded.baseline ?? client]} producer (idempotent, acks=all)`
      : 'amqplib confirm channel';
  const via =
    (client === 'platformatic' ? ', producerClient @platformatic/kafka' : '') +
    (keepSent ? '' : ', sentRetentionMs 0 (rows deleted once confirmed)');
  context.results.figures.push({
    scenario: '1. Relay throughput',
    name: `Relay ${database} → ${kind === 'kafka' ? 'Kafka' : 'RabbitMQ'}${via} (${rows} rows of ${payloadBytes} B, ${keys} keys, batch ${batchSize})`,
    unit: 'msg/s',
    ours,
    baseline: { name: `raw ${rawClient}, same messages and batches`, value: baseline },
    ratio: r,
    // Against another client's producer the ratio is a comparison, not the relay's overhead: no target.
    target: recorded.baseline ? undefined : { text: `≥ ${TARGET[kind]}× raw`, met: r >= TARGET[kind] },
  });
}
