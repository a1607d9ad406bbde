import { INestApplicationContext } from '@nestjs/common';
import { Pool } from 'pg';
import { createReplicationSlot, logicalNames, SqlRunner } from 'nest-reliable-messaging/testing';
import { RelayOptions } from 'nest-reliable-messaging';
import { DebeziumRelay } from '../../test/harness/debezium';
import {
  LOGICAL_DECODING_SETTINGS,
  PostgresCluster,
  startPrivatePostgres,
} from '../../test/harness/postgres-cluster';
import {
  ensureDebeziumJars,
  pinnedConnectVersion,
  pinnedDebeziumVersion,
} from '../../tools/infra/debezium-jars';
import { createOutboxPublication } from '../../tools/infra/debezium-outbox';
import { createBenchApp } from '../lib/bench-app';
import { benchEvent, BenchEvent, benchWireMessages, padding } from '../lib/bench-event';
import { benchKafka } from '../lib/brokers';
import { benchName, openClient } from '../lib/databases';
import { latencyWindow, LatencyWindow } from '../lib/latency-window';
import { coreSpeedMiBps, processesCpuMs } from '../lib/machine';
import { offerAtRate } from '../lib/offered-load';
import { ProbeProcess, startConsumerProcess } from '../lib/probe-process';
import { RawPlacer } from '../lib/raw-placer';
import { rawPublisher } from '../lib/raw-publishers';
import { Figure, LatencyPoint } from '../lib/results';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { percentile, ratio, summarize } from '../lib/stats';
import { now } from '../lib/time';
import { APPEND_TIME_TOPIC, appendRate, waitForRecords } from '../lib/topic-arrivals';
import { BenchOrder, BenchWriter, WriterSettings } from '../lib/writer.fixture';

const SCENARIO = '11. Debezium';
const DATABASE = 'bench_debezium';

/** Who relays in a latency run: Debezium (at a `poll.interval.ms`), our two relays, or nobody (the floor). */
type Contender =
  | { readonly kind: 'debezium'; readonly pollIntervalMs: number }
  | { readonly kind: 'logical' | 'poll' | 'floor' };

function contenders(pollIntervalsMs: readonly number[]): Contender[] {
  return [
    ...pollIntervalsMs.map((pollIntervalMs) => ({ kind: 'debezium' as const, pollIntervalMs })),
    { kind: 'logical' },
    { kind: 'poll' },
    { kind: 'floor' },
  ];
}

function idOf(c: Contender): string {
  return c.kind === 'debezium' ? `debezium-${c.pollIntervalMs}ms` : c.kind;
}

function labelOf(c: Contender, peer: string): string {
  switch (c.kind) {
    case 'debezium':
      return `${peer}, poll.interval.ms ${c.pollIntervalMs}${c.pollIntervalMs === 500 ? ' (its default)' : ''}`;
    case 'logical':
      return "relay.mode 'logical' (this library)";
    case 'poll':
      return 'polling relay, after-commit wake-up (this library, default mode)';
    case 'floor':
      return 'floor: raw kafkajs producer → library consumer (no outbox; from the confirm)';
  }
}

/**
 * 11. Debezium as users run it for the outbox (Kafka Connect standalone with `debezium-connector-postgres` and
 * its outbox event router, the connector of examples/debezium/, `relay.mode: 'external'`) against our logical
 * and polling relays, on one private PostgreSQL cluster with wal_level = logical and the same Kafka: commit →
 * handler start at 200/s and at the writer's ceiling (the library's consumer in a process of its own, its
 * inbox on the shared server), throughput from a backlog (records on the topic, first to last, watched from
 * outside both relays), the floor and the raw producer measured in the same run, one core's speed beside them.
 * Kafka only: Debezium's Kafka Connect writes to Kafka.
 */
export const debezium: Scenario = {
  name: 'debezium',
  steps: (plan) =>
    plan.transports.includes('kafka')
      ? 1 +
        contenders(plan.debezium.pollIntervalsMs).length *
          (plan.debezium.rates.length + 1) *
          plan.debezium.runs +
        plan.debezium.throughputRuns
      : 0,
  async run(context) {
    if (!context.plan.transports.includes('kafka')) return;
    const peer = `Debezium ${await pinnedDebeziumVersion()} (Kafka Connect ${await pinnedConnectVersion()} standalone)`;
    // The jars first (a download is no part of any window).
    await ensureDebeziumJars((line) => context.progress.log(line));
    const cluster = await startPrivatePostgres('bench-debezium', { settings: LOGICAL_DECODING_SETTINGS });
    try {
      const url = await cluster.createDatabase(DATABASE);
      context.results.notes.push(
        `${SCENARIO}: ${peer} with the connector of examples/debezium/ (outbox event router, OutboxHeaders), ` +
          `every contender on one private PostgreSQL cluster with wal_level = logical and fsync = off; the ` +
          `consumer keeps its inbox on the shared server. One core's speed at the start: ${coreSpeedMiBps()} MiB/s ` +
          `of SHA-256.`,
      );
      const ceiling = await writerCeiling(context, url);
      await latencies(context, cluster, url, ceiling, peer);
      await throughput(context, cluster, url, peer);
    } finally {
      await cluster.destroy();
    }
  },
};

/** The bench writer (an order and its event, `@Outbox`) in `schema` of the cluster's database. */
function writerApp(
  url: string,
  schema: string,
  event: BenchEvent,
  relay: RelayOptions,
  context: ScenarioContext,
): Promise<INestApplicationContext> {
  const { payloadBytes, keys } = context.plan.throughput;
  return createBenchApp({
    databaseUrl: url,
    schema,
    transport: 'kafka',
    serviceName: 'bench-debezium',
    relay,
    poolSize: 20,
    entities: [BenchOrder],
    providers: [
      BenchWriter,
      { provide: WriterSettings, useValue: new WriterSettings(event, padding(payloadBytes), keys) },
    ],
  });
}

/** The writer's ceiling here: plain inserts of the business row from 20 connections, as fast as they go. */
async function writerCeiling(context: ScenarioContext, url: string): Promise<number> {
  const { ceilingMessages } = context.plan.debezium;
  context.progress.step(`${SCENARIO}: the writer's ceiling`);
  const schema = benchName('dbz_ceiling');
  const pool = new Pool({ connectionString: url, max: 20 });
  try {
    await pool.query(`create schema "${schema}"`);
    await pool.query(`create table "${schema}".bench_orders (id serial primary key, key text, seq integer)`);
    const started = now();
    await offerAtRate(ceilingMessages, 1_000_000, (seq) =>
      pool
        .query(`insert into "${schema}".bench_orders (key, seq) values ($1, $2)`, [`key-${seq % 100}`, seq])
        .then(() => undefined),
    );
    const ceiling = Math.floor((ceilingMessages * 1000) / (now() - started));
    context.results.notes.push(
      `${SCENARIO}: the writer's ceiling here, plain inserts of the business row from 20 connections: ` +
        `${ceiling}/s; the latency runs offer it as the highest rate.`,
    );
    return ceiling;
  } finally {
    await pool.query(`drop schema "${schema}" cascade`).catch(() => undefined);
    await pool.end();
  }
}

/** A schema for `contender`'s outbox, and what writes into it and relays it. */
interface Setup {
  readonly place: (run: string, seq: number) => Promise<void>;
  stop(): Promise<void>;
}

async function setUp(
  context: ScenarioContext,
  cluster: PostgresCluster,
  url: string,
  contender: Contender,
  event: BenchEvent,
): Promise<Setup> {
  const { payloadBytes, keys } = context.plan.throughput;
  if (contender.kind === 'floor') {
    const placer = await RawPlacer.start('kafka', event, payloadBytes, keys);
    return { place: (run, seq) => placer.place(run, seq), stop: () => placer.stop() };
  }
  const schema = benchName(`dbz_${contender.kind}`);
  await createSchema(url, schema, contender.kind === 'logical');
  const mode = contender.kind === 'debezium' ? 'external' : contender.kind;
  // Debezium's writer runs no relay of ours (nothing would be pending for it anyway).
  const app = await writerApp(url, schema, event, { mode, enabled: mode !== 'external' }, context);
  let relay: DebeziumRelay | undefined;
  try {
    if (contender.kind === 'debezium') {
      relay = await DebeziumRelay.start({
        cluster,
        database: DATABASE,
        schema,
        slot: schema,
        extra: { 'poll.interval.ms': String(contender.pollIntervalMs) },
      });
    }
  } catch (error) {
    await app.close();
    throw error;
  }
  const writer = app.get(BenchWriter);
  return {
    place: (run, seq) => writer.place(run, seq),
    stop: async () => {
      await app.close();
      await relay?.destroy();
    },
  };
}

/** A schema of the cluster's bench database; with `slot`, the logical relay's slot and publication. */
async function createSchema(url: string, schema: string, slot: boolean): Promise<void> {
  const db = await openClient(url);
  try {
    await db.query(`create schema "${schema}"`);
    if (slot) {
      const sql: SqlRunner = async <R extends object>(text: string, params?: unknown[]) =>
        (await db.query(text, params)).rows as R[];
      await createReplicationSlot(sql, logicalNames(schema));
    }
  } finally {
    await db.end();
  }
}

/** Commit → handler start for every contender at the plan's rates and at the writer's ceiling. */
async function latencies(
  context: ScenarioContext,
  cluster: PostgresCluster,
  url: string,
  ceiling: number,
  peer: string,
): Promise<void> {
  const { plan } = context;
  const rates = [...plan.debezium.rates, ceiling];
  const all = contenders(plan.debezium.pollIntervalsMs);
  for (const contender of all) {
    context.results.latency.push(...(await contenderRuns(context, cluster, url, contender, rates, peer)));
  }
  record(context, all, rates, peer);
}

async function contenderRuns(
  context: ScenarioContext,
  cluster: PostgresCluster,
  url: string,
  contender: Contender,
  rates: readonly number[],
  peer: string,
): Promise<LatencyPoint[]> {
  const { plan, progress, brokers } = context;
  const { stallMs, windowMs, maxMessages } = plan.debezium;
  const id = idOf(contender);
  const destination = benchName(`bench_dbz_${id.replace(/-/g, '_')}`);
  const event = benchEvent(destination);
  await brokers.topic(destination);
  const benchDb = await openClient(context.benchDbUrl);
  const consumerSchema = benchName('dbz_consumer');
  await benchDb.query(`create schema "${consumerSchema}"`);
  let consumer: ProbeProcess | undefined;
  let setup: Setup | undefined;
  try {
    setup = await setUp(context, cluster, url, contender, event);
    consumer = await startConsumerProcess(context.probes, brokers, 'kafka', destination, {
      databaseUrl: context.benchDbUrl,
      schema: consumerSchema,
      group: benchName('bench_dbz'),
    });
    const probe = consumer.probe;
    const tolerateMissing = contender.kind === 'debezium';
    const window = (run: string, rate: number): Promise<LatencyWindow> =>
      latencyWindow(setup!.place, probe, run, rate, {
        windowMs,
        maxMessages,
        stallMs: tolerateMissing ? stallMs : 60_000,
        tolerateMissing,
        onProgress: (done, count) => progress.update(done, count, 'handled'),
      });
    const noteMissing = (result: LatencyWindow, run: string) => {
      if (result.missing > 0) {
        context.results.notes.push(
          `${SCENARIO}: ${labelOf(contender, peer)} (run ${run}): ${result.missing} messages had not reached ` +
            `the consumer ${stallMs / 1000} s after the last one that did; their latency is left out.`,
        );
      }
    };
    // Twenty messages through, and one window at 200/s, not measured: pools, JIT, the connector's first batch.
    const warm = `warm_${id}`;
    for (let seq = 0; seq < 20; seq++) await setup.place(warm, seq);
    try {
      await probe.waitFor(warm, 20, tolerateMissing ? stallMs : 60_000);
    } catch (error) {
      if (!tolerateMissing) throw error;
      noteMissing({ latencies: [], achieved: 0, missing: 20 - probe.count(warm) }, warm);
    } finally {
      probe.forget(warm);
    }
    if (plan.debezium.warmUpWindow) noteMissing(await window(`warm_load_${id}`, 200), `warm_load_${id}`);
    const points: LatencyPoint[] = [];
    for (const rate of rates) {
      const runs: LatencyWindow[] = [];
      for (let r = 0; r < plan.debezium.runs; r++) {
        progress.step(`${SCENARIO}: latency, ${id}, ${rate}/s, run ${r + 1}`);
        const run = `dbz_${id}_${rate}_${r}`;
        const result = await window(run, rate);
        noteMissing(result, run);
        runs.push(result);
      }
      const each = (p: number) => summarize(runs.map((x) => percentile(x.latencies, p)));
      points.push({
        transport: 'kafka',
        config: `debezium-${id}`,
        label: `${labelOf(contender, peer)}${rate === rates[rates.length - 1] ? ' (at the writer ceiling)' : ''}`,
        offeredRate: rate,
        achievedRate: summarize(runs.map((x) => x.achieved)).median,
        p50: each(50),
        p95: each(95),
        p99: each(99),
        max: summarize(runs.map((x) => Math.max(...x.latencies))),
        samplesPerRun: runs[0]?.latencies.length ?? 0,
      });
    }
    return points;
  } finally {
    await consumer?.stop();
    await setup?.stop().catch(() => undefined);
    await benchDb.query(`drop schema "${consumerSchema}" cascade`).catch(() => undefined);
    await benchDb.end();
  }
}

/** Ours against Debezium at each rate, and the floor beside them (the machine's speed in this run). */
function record(
  context: ScenarioContext,
  all: readonly Contender[],
  rates: readonly number[],
  peer: string,
): void {
  const find = (c: Contender, rate: number) =>
    context.results.latency.find((p) => p.config === `debezium-${idOf(c)}` && p.offeredRate === rate);
  const ceiling = rates[rates.length - 1];
  const floor = all.find((c) => c.kind === 'floor') as Contender;
  for (const rate of rates) {
    const where = rate === ceiling ? `${rate}/s offered (the writer's ceiling)` : `${rate}/s`;
    const floorPoint = find(floor, rate);
    for (const ours of all.filter((c) => c.kind === 'logical' || c.kind === 'poll')) {
      const point = find(ours, rate);
      if (!point) continue;
      for (const dbz of all.filter((c) => c.kind === 'debezium')) {
        const base = find(dbz, rate);
        context.results.figures.push({
          scenario: SCENARIO,
          name:
            `p99 commit → handler start at ${where}, Kafka: ${labelOf(ours, peer)} vs Debezium` +
            (floorPoint ? ` (floor in this run: p99 ${floorPoint.p99.median.toFixed(1)} ms)` : ''),
          unit: 'ms',
          ours: point.p99,
          baseline: base
            ? { name: `${base.label} (committed ${Math.round(base.achievedRate)}/s)`, value: base.p99 }
            : undefined,
          ratio: base ? ratio(point.p99.median, base.p99.median) : undefined,
          target: {
            text: 'ahead of the peer (ratio < 1)',
            met: !!base && point.p99.median < base.p99.median,
          },
        });
      }
    }
  }
}

/**
 * Throughput from a backlog: `throughputMessages` committed (one per transaction, 20 at a time) while no relay
 * runs, then the relay starts; the rate is the topic's, between the broker's append times of the first record
 * and the last (the relay's start and connection left out). Debezium reads its slot (made before the writes),
 * ours the slot or the table. Beside them the raw producer, batches of the relay's size after the first.
 */
async function throughput(
  context: ScenarioContext,
  cluster: PostgresCluster,
  url: string,
  peer: string,
): Promise<void> {
  const { plan, progress, brokers } = context;
  const { throughputMessages: messages, throughputRuns: runs } = plan.debezium;
  const { keys, payloadBytes, batchSize } = plan.throughput;
  const kafka = benchKafka('bench-debezium-watch');
  const rates: Record<'debezium' | 'logical' | 'poll' | 'raw', number[]> = {
    debezium: [],
    logical: [],
    poll: [],
    raw: [],
  };
  const cpuPerMessage: number[] = [];
  for (let r = 0; r < runs; r++) {
    progress.step(`${SCENARIO}: throughput, run ${r + 1}/${runs} (${messages} messages each)`);
    for (const kind of ['debezium', 'logical', 'poll'] as const) {
      const destination = benchName(`bench_dbz_tp_${kind}`);
      await brokers.topic(destination, 3, APPEND_TIME_TOPIC);
      const event = benchEvent(destination);
      const schema = benchName(`dbz_tp_${kind}`);
      await createSchema(url, schema, kind === 'logical');
      const mode = kind === 'debezium' ? 'external' : kind;
      const writer = await writerApp(url, schema, event, { mode, enabled: false }, context);
      try {
        if (kind === 'debezium') {
          // The publication and the slot before the writes: the backlog waits in the slot.
          await createOutboxPublication((sql) => cluster.query(sql, [], DATABASE), schema, schema);
          await cluster.query(
            `select pg_create_logical_replication_slot($1, 'pgoutput')`,
            [schema],
            DATABASE,
          );
        }
        await offerAtRate(messages, 1_000_000, (seq) => writer.get(BenchWriter).place(`tp${r}`, seq));
      } finally {
        await writer.close();
      }
      const onProgress = (done: number) => progress.update(done, messages, kind);
      if (kind === 'debezium') {
        const jvmCpuMs = () => processesCpuMs((cmd) => cmd.includes('ConnectStandalone'));
        let cpuAtFirst = 0;
        const relay = await DebeziumRelay.start({ cluster, database: DATABASE, schema, slot: schema });
        try {
          await waitForRecords(kafka, destination, messages, {
            onProgress,
            onFirst: () => (cpuAtFirst = jvmCpuMs()),
          });
          cpuPerMessage.push(((jvmCpuMs() - cpuAtFirst) * 1000) / messages);
        } finally {
          await relay.destroy();
        }
      } else {
        const relayApp = await createBenchApp({
          databaseUrl: url,
          schema,
          transport: 'kafka',
          serviceName: 'bench-debezium-relay',
          relay: { mode: kind, batchSize },
        });
        try {
          await waitForRecords(kafka, destination, messages, { onProgress });
        } finally {
          await relayApp.close();
        }
      }
      rates[kind].push(await appendRate(kafka, destination, messages));
    }
    const destination = benchName('bench_dbz_tp_raw');
    await brokers.topic(destination);
    const raw = await rawPublisher('kafka');
    try {
      const wire = benchWireMessages(`raw${r}`, destination, messages, keys, padding(payloadBytes));
      await raw.publish(wire.slice(0, batchSize)); // the first batch warms the client up, as for the relays
      const started = now();
      for (let i = batchSize; i < wire.length; i += batchSize)
        await raw.publish(wire.slice(i, i + batchSize));
      rates.raw.push(((messages - Math.min(batchSize, messages)) * 1000) / Math.max(1, now() - started));
    } finally {
      await raw.close();
    }
  }
  const what =
    `relay throughput → Kafka from a backlog of ${messages} messages (one per transaction, ${payloadBytes} B, ` +
    `${keys} keys), the broker's append times of the first record and the last`;
  const debeziumRate = summarize(rates.debezium);
  const figure = (name: string, ours: number[], base: number[], baseName: string): Figure => ({
    scenario: SCENARIO,
    name,
    unit: 'msg/s',
    ours: summarize(ours),
    baseline: { name: baseName, value: summarize(base) },
    ratio: ratio(summarize(ours).median, summarize(base).median),
  });
  context.results.figures.push(
    {
      ...figure(`${what}: logical relay vs Debezium`, rates.logical, rates.debezium, peer),
      target: {
        text: 'ahead of the peer (ratio > 1)',
        met: summarize(rates.logical).median > debeziumRate.median,
      },
    },
    {
      ...figure(`${what}: polling relay (batch ${batchSize}) vs Debezium`, rates.poll, rates.debezium, peer),
      target: {
        text: 'ahead of the peer (ratio > 1)',
        met: summarize(rates.poll).median > debeziumRate.median,
      },
    },
    figure(
      `${what}: Debezium vs the raw producer (the machine's speed in this run)`,
      rates.debezium,
      rates.raw,
      `raw kafkajs producer (idempotent, acks=all, batches of ${batchSize})`,
    ),
  );
  context.results.notes.push(
    `${SCENARIO}: Debezium's worker used ${summarize(cpuPerMessage).median.toFixed(0)} µs of CPU per message ` +
      `draining the backlog (its JVM, /proc, from the first record on the topic to the last).`,
  );
}
