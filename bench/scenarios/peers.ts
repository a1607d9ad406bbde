import { Client } from 'pg';
import { PostgresCluster, startPrivatePostgres } from '../../test/harness/postgres-cluster';
import { padding } from '../lib/bench-event';
import { benchName, openClient } from '../lib/databases';
import { warmUp } from './latency';
import { offerAtRate } from '../lib/offered-load';
import { PeerConfig, PgTransactionalOutboxPeer } from '../lib/peer-pgto';
import { PeerConfigId, TransportKind } from '../lib/plan';
import { ProbeProcess, startConsumerProcess } from '../lib/probe-process';
import { Figure } from '../lib/results';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { percentile, ratio, summarize } from '../lib/stats';
import { now, sleep, within } from '../lib/time';

const PEER = 'pg-transactional-outbox 0.5.7';
/** The polling interval of the polling configurations: 10× its default's rate (see bench/README.md). */
const POLL_MS = 50;

/** Its best documented configurations for each figure (bench/README.md, figure 6). */
export const PEER_CONFIGS: Record<PeerConfigId, PeerConfig> = {
  'polling-ordered': {
    id: 'polling-ordered',
    label: `polling, key order kept (sequential segments), batch 200 from the first poll, poll ${POLL_MS} ms`,
    listener: {
      kind: 'polling',
      batchSize: 200,
      pollMs: POLL_MS,
      concurrency: 'sequential',
      fullBatches: true,
    },
  },
  'polling-unordered': {
    id: 'polling-unordered',
    label: `polling, no order (parallel rows), batch 200 from the first poll, poll ${POLL_MS} ms`,
    listener: {
      kind: 'polling',
      batchSize: 200,
      pollMs: POLL_MS,
      concurrency: 'parallel',
      fullBatches: true,
    },
  },
  replication: {
    id: 'replication',
    label: 'logical replication (private cluster, wal_level=logical), segment mutex (key order kept)',
    listener: { kind: 'replication', concurrency: 'segment-mutex' },
  },
};

/** Where a configuration's outbox lives: the bench database, or the private cluster for replication. */
interface PeerDatabases {
  readonly bench: string;
  readonly replication?: string;
}

/**
 * 6. A peer side by side: pg-transactional-outbox in its best documented configurations, on the same
 * broker, batch size and payloads, in the same throughput and latency runs (its publisher waits for the
 * broker's confirmation, like ours). Its logical replication listener runs on a private PostgreSQL cluster
 * with wal_level = logical (the shared server has `replica` and must not be restarted).
 */
export const peers: Scenario = {
  name: 'peers',
  steps: (plan) =>
    plan.transports.length *
    (plan.peers.configs.length * plan.peers.runs +
      plan.peers.latencyConfigs.length * plan.peers.rates.length * plan.peers.latencyRuns),
  async run(context) {
    context.results.notes.push(NESTIXIS);
    const { configs, latencyConfigs } = context.plan.peers;
    let cluster: PostgresCluster | undefined;
    try {
      let replication: string | undefined;
      if ([...configs, ...latencyConfigs].includes('replication')) {
        cluster = await startLogicalCluster();
        replication = await cluster.createDatabase('bench_peer');
        const [fsync] = await cluster.query<{ fsync: string }>('show fsync');
        context.results.notes.push(
          `${PEER}, logical replication listener: on a private PostgreSQL cluster (the same binaries) with ` +
            `wal_level = logical and fsync = ${fsync.fsync} (the test harness's setting), the writer and the ` +
            'listener on it; the consumer keeps its inbox on the shared server as in every other run.',
        );
      }
      const databases: PeerDatabases = { bench: context.benchDbUrl, replication };
      for (const kind of context.plan.transports) {
        for (const id of configs) await throughput(context, kind, PEER_CONFIGS[id], databases);
        for (const id of latencyConfigs) await latency(context, kind, PEER_CONFIGS[id], databases);
      }
    } finally {
      await cluster?.destroy();
    }
  },
};

/** A private cluster with wal_level = logical (set with ALTER SYSTEM, then a restart). */
async function startLogicalCluster(): Promise<PostgresCluster> {
  const cluster = await startPrivatePostgres('bench-peer');
  try {
    await cluster.query('alter system set wal_level = logical');
    await cluster.restart();
    const [row] = await cluster.query<{ wal_level: string }>('show wal_level');
    if (row.wal_level !== 'logical') throw new Error(`the private cluster has wal_level = ${row.wal_level}`);
    return cluster;
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
}

const NESTIXIS =
  '@nestixis/nestjs-inbox-outbox: not run. The npm registry answers 404 for it and for ' +
  '@nestixis/nestjs-inbox-outbox-typeorm-driver (`npm view`); its source (github.com/Nestixis/nestjs-inbox-outbox, ' +
  'v0.0.23) declares peerDependencies @nestjs/common and @nestjs/core ^10 and its TypeORM driver depends on ' +
  'typeorm ^0.3.20, which conflict with our Nest 12 and TypeORM 1.1 even if it could be fetched.';

async function withPeer<T>(
  context: ScenarioContext,
  kind: TransportKind,
  config: PeerConfig,
  databases: PeerDatabases,
  work: (peer: PgTransactionalOutboxPeer, destination: string, schema: string, db: Client) => Promise<T>,
): Promise<T> {
  const schema = benchName(`peer_${config.id.replace('-', '_')}_${kind}`);
  const destination = benchName(`bench_peer_${kind}`);
  const url = config.listener.kind === 'replication' ? databases.replication : databases.bench;
  if (!url) throw new Error(`no database for the peer configuration ${config.id}`);
  const db = await openClient(url);
  // The consumer of the latency runs keeps its inbox in the bench database, in a schema of that name.
  const benchDb = url === databases.bench ? db : await openClient(databases.bench);
  await db.query(`create schema "${schema}"`);
  if (benchDb !== db) await benchDb.query(`create schema "${schema}"`);
  const peer = new PgTransactionalOutboxPeer(url, schema, destination, config.listener);
  try {
    await peer.setup(db);
    return await work(peer, destination, schema, db);
  } finally {
    await peer.teardown(db).catch(() => undefined);
    await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
    await db.end();
    if (benchDb !== db) {
      await benchDb.query(`drop schema "${schema}" cascade`).catch(() => undefined);
      await benchDb.end();
    }
  }
}

/** N pending rows in the peer's outbox → broker, as in figure 1. */
async function throughput(
  context: ScenarioContext,
  kind: TransportKind,
  config: PeerConfig,
  databases: PeerDatabases,
): Promise<void> {
  const { progress, brokers, plan } = context;
  const { rows, runs } = plan.peers;
  const { keys, payloadBytes, batchSize } = plan.throughput;
  const rates = await withPeer(context, kind, config, databases, async (peer, destination, _schema, db) => {
    const sink = `${destination}.sink`;
    if (kind === 'kafka') await brokers.topic(destination);
    else await brokers.exchange(destination, sink);
    const measured: number[] = [];
    {
      for (let r = 0; r < runs; r++) {
        progress.step(
          `6. peer ${PEER} ${config.id} throughput → ${kind}, run ${r + 1}/${runs} (${rows} rows)`,
        );
        await peer.fill(db, `peer${r}`, rows, keys, padding(payloadBytes));
        await db.query('analyze');
        let sent = 0;
        let resolveDone: () => void = () => undefined;
        const done = new Promise<void>((resolve) => (resolveDone = resolve));
        const started = now();
        const stop = await peer.startListener(kind, () => {
          sent += 1;
          if (sent % 100 === 0) progress.update(sent, rows, 'published');
          if (sent >= rows) resolveDone();
        });
        let elapsed: number;
        try {
          // A run ends after maxSeconds: the rate is then what was confirmed by then.
          await within(done, plan.peers.maxSeconds * 1000, 'peer run').catch(() => undefined);
          elapsed = now() - started;
        } finally {
          await stop();
        }
        if (sent < rows)
          context.results.notes.push(
            `${PEER} (${config.id}) → ${brokerName(kind)}, throughput run ${r + 1}: ${sent} of ${rows} rows ` +
              `confirmed when the run ended after ${plan.peers.maxSeconds} s; the rate is over those.`,
          );
        measured.push((sent * 1000) / elapsed);
        const processed = await peer.processedCount(db);
        if (processed < sent)
          throw new Error(`${PEER} marked ${processed} of ${sent} published rows processed`);
        await peer.clear(db);
        if (kind === 'rabbitmq') await brokers.purgeQueue(sink);
      }
    }
    return measured;
  });
  const ours = context.results.figures.find(
    // The peer runs on PostgreSQL only: beside the library's PostgreSQL figure.
    (f) =>
      f.scenario === '1. Relay throughput' && f.name.startsWith(`Relay PostgreSQL → ${brokerName(kind)}`),
  );
  const peerSummary = summarize(rates);
  context.results.figures.push({
    scenario: '6. Peer',
    name: `relay throughput → ${brokerName(kind)}: this library (figure 1, batch ${batchSize}) vs ${PEER}, ${rows} rows`,
    unit: 'msg/s',
    ours: ours?.ours ?? summarize([]),
    baseline: { name: `${PEER}: ${config.label}`, value: peerSummary },
    ratio: ours ? ratio(ours.ours.median, peerSummary.median) : undefined,
  });
}

/** The latency runs of figure 2 with the peer as the relay, and the same consumer. */
async function latency(
  context: ScenarioContext,
  kind: TransportKind,
  config: PeerConfig,
  databases: PeerDatabases,
): Promise<void> {
  const { progress, plan } = context;
  const { keys, payloadBytes } = plan.throughput;
  await withPeer(context, kind, config, databases, async (peer, destination, schema) => {
    let consumer: ProbeProcess | undefined;
    const writer = peer.writer(keys, padding(payloadBytes));
    let stop: (() => Promise<void>) | undefined;
    try {
      // The same consumer as figure 2's, in a process of its own.
      consumer = await startConsumerProcess(context.probes, context.brokers, kind, destination, {
        databaseUrl: context.benchDbUrl,
        schema,
        group: benchName('bench_peer_lat'),
      });
      const probe = consumer.probe;
      stop = await peer.startListener(kind, () => undefined);
      await warmUp(writer.place, probe, 'peer_warm');
      for (const rate of plan.peers.rates) {
        const runs: Array<{ latencies: number[]; achieved: number }> = [];
        for (let r = 0; r < plan.peers.latencyRuns; r++) {
          progress.step(`6. peer ${PEER} ${config.id} latency ${kind}, ${rate}/s, run ${r + 1}`);
          const run = `peer_${rate}_${r}`;
          const count = Math.min(
            plan.peers.maxMessages,
            Math.max(20, Math.round((rate * plan.peers.windowMs) / 1000)),
          );
          const commits = new Map<number, number>();
          await offerAtRate(count, rate, async (seq) => {
            await writer.place(run, seq);
            commits.set(seq, now());
          });
          try {
            await probe.waitFor(run, count, plan.peers.stallMs, (done) =>
              progress.update(done, count, 'handled'),
            );
          } catch {
            // The peer's behaviour, not the bench's: report it, and the latencies of what did arrive.
            context.results.notes.push(
              `${PEER} (${config.id}) → ${brokerName(kind)} at ${rate}/s: ${count - probe.count(run)} of ${count} messages had not ` +
                `reached the consumer ${plan.peers.stallMs / 1000} s after the last one that did; their latency is left out.`,
            );
          }
          const starts = probe.startsOf(run);
          const times = [...commits.values()];
          runs.push({
            latencies: [...commits].flatMap(([seq, at]) => {
              const started = starts.get(seq);
              return started === undefined ? [] : [started - at];
            }),
            achieved: ((count - 1) * 1000) / (Math.max(...times) - Math.min(...times)),
          });
          probe.forget(run);
          await sleep(200);
        }
        const each = (p: number) => summarize(runs.map((x) => percentile(x.latencies, p)));
        context.results.latency.push({
          transport: kind,
          config: `peer-${config.id}`,
          label: `peer: ${PEER}, ${config.label}`,
          offeredRate: rate,
          achievedRate: summarize(runs.map((x) => x.achieved)).median,
          p50: each(50),
          p95: each(95),
          p99: each(99),
          max: summarize(runs.map((x) => Math.max(...x.latencies))),
          samplesPerRun: runs[0]?.latencies.length ?? 0,
        });
        recordLatency(context, kind, rate, config);
      }
    } finally {
      await stop?.();
      await consumer?.stop();
      await writer.close();
    }
  });
}

function recordLatency(
  context: ScenarioContext,
  kind: TransportKind,
  rate: number,
  config: PeerConfig,
): void {
  const find = (config: string) =>
    context.results.latency.find(
      (p) => p.transport === kind && p.config === config && p.offeredRate === rate,
    );
  const peer = find(`peer-${config.id}`);
  const ours = find('wakeup');
  if (!peer) return;
  const figure: Figure = {
    scenario: '6. Peer',
    name: `p99 commit → handler start at ${rate}/s, ${brokerName(kind)}: this library (default, figure 2) vs ${PEER} (${config.id})`,
    unit: 'ms',
    ours: ours?.p99 ?? summarize([]),
    baseline: { name: peer.label, value: peer.p99 },
    ratio: ours ? ratio(ours.p99.median, peer.p99.median) : undefined,
  };
  context.results.figures.push(figure);
}

function brokerName(kind: TransportKind): string {
  return kind === 'kafka' ? 'Kafka' : 'RabbitMQ';
}
