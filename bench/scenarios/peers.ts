import { padding } from '../lib/bench-event';
import { benchName, openClient } from '../lib/databases';
import { warmUp } from './latency';
import { offerAtRate } from '../lib/offered-load';
import { PEER_POLL_MS, PgTransactionalOutboxPeer } from '../lib/peer-pgto';
import { TransportKind } from '../lib/plan';
import { ProbeProcess, startConsumerProcess } from '../lib/probe-process';
import { Figure } from '../lib/results';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { percentile, ratio, summarize } from '../lib/stats';
import { now, sleep, within } from '../lib/time';

const PEER = 'pg-transactional-outbox 0.5.7';

/**
 * 6. A peer side by side: pg-transactional-outbox's polling listener, on the same database, broker, batch
 * size and payloads, in the same throughput and latency runs (its publisher waits for the broker's
 * confirmation, like ours). Its logical replication listener and @nestixis/nestjs-inbox-outbox cannot run
 * here: see the notes this scenario records.
 */
export const peers: Scenario = {
  name: 'peers',
  steps: (plan) =>
    plan.transports.length * (plan.peers.runs + plan.peers.rates.length * plan.peers.latencyRuns),
  async run(context) {
    context.results.notes.push(...CANNOT_RUN);
    for (const kind of context.plan.transports) {
      await throughput(context, kind);
      await latency(context, kind);
    }
  },
};

const CANNOT_RUN = [
  `${PEER}, logical replication listener: not run. It needs wal_level = logical; this PostgreSQL has ` +
    'wal_level = replica, and changing it needs a restart of the shared server, which the bench must not do.',
  '@nestixis/nestjs-inbox-outbox: not run. The npm registry answers 404 for it and for ' +
    '@nestixis/nestjs-inbox-outbox-typeorm-driver (`npm view`); its source (github.com/Nestixis/nestjs-inbox-outbox, ' +
    'v0.0.23) declares peerDependencies @nestjs/common and @nestjs/core ^10 and its TypeORM driver depends on ' +
    'typeorm ^0.3.20, which conflict with our Nest 11 and TypeORM 1.1 even if it could be fetched.',
];

async function withPeer<T>(
  context: ScenarioContext,
  kind: TransportKind,
  label: string,
  work: (peer: PgTransactionalOutboxPeer, destination: string, schema: string) => Promise<T>,
): Promise<T> {
  const schema = benchName(`peer_${label}_${kind}`);
  const destination = benchName(`bench_peer_${label}_${kind}`);
  const db = await openClient(context.benchDbUrl);
  await db.query(`create schema "${schema}"`);
  const peer = new PgTransactionalOutboxPeer(
    context.benchDbUrl,
    schema,
    destination,
    context.plan.throughput.batchSize,
  );
  try {
    await peer.setup(db);
    return await work(peer, destination, schema);
  } finally {
    await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
    await db.end();
  }
}

/** N pending rows in the peer's outbox → broker, as in figure 1. */
async function throughput(context: ScenarioContext, kind: TransportKind): Promise<void> {
  const { progress, brokers, plan } = context;
  const { rows, runs } = plan.peers;
  const { keys, payloadBytes, batchSize } = plan.throughput;
  const rates = await withPeer(context, kind, 'tp', async (peer, destination) => {
    const sink = `${destination}.sink`;
    if (kind === 'kafka') await brokers.topic(destination);
    else await brokers.exchange(destination, sink);
    const db = await openClient(context.benchDbUrl);
    const measured: number[] = [];
    try {
      for (let r = 0; r < runs; r++) {
        progress.step(`6. peer ${PEER} throughput → ${kind}, run ${r + 1}/${runs} (${rows} rows)`);
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
        try {
          await within(done, 300_000, `${PEER} publishing ${rows} rows`);
        } finally {
          await stop();
        }
        measured.push((rows * 1000) / (now() - started));
        const processed = await peer.processedCount(db);
        if (processed < rows * (r + 1))
          throw new Error(`${PEER} marked ${processed} of ${rows * (r + 1)} rows processed`);
        if (kind === 'rabbitmq') await brokers.purgeQueue(sink);
      }
    } finally {
      await db.end();
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
    name: `relay throughput → ${brokerName(kind)}: this library (figure 1) vs ${PEER}, polling listener, batch ${batchSize}, ${rows} rows`,
    unit: 'msg/s',
    ours: ours?.ours ?? summarize([]),
    baseline: { name: `${PEER} (polling, its default ${PEER_POLL_MS} ms interval)`, value: peerSummary },
    ratio: ours ? ratio(ours.ours.median, peerSummary.median) : undefined,
  });
}

/** The latency runs of figure 2 with the peer as the relay, and the same consumer. */
async function latency(context: ScenarioContext, kind: TransportKind): Promise<void> {
  const { progress, plan } = context;
  const { keys, payloadBytes } = plan.throughput;
  await withPeer(context, kind, 'lat', async (peer, destination, schema) => {
    let consumer: ProbeProcess | undefined;
    const writer = peer.writer(keys, padding(payloadBytes));
    let stop: (() => Promise<void>) | undefined;
    try {
      // The same consumer as figure 2's, in a process of its own.
      consumer = await startConsumerProcess(context.brokers, kind, destination, {
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
          progress.step(`6. peer ${PEER} latency ${kind}, ${rate}/s, run ${r + 1}`);
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
            await probe.waitFor(run, count, 60_000, (done) => progress.update(done, count, 'handled'));
          } catch {
            // The peer's behaviour, not the bench's: report it, and the latencies of what did arrive.
            context.results.notes.push(
              `${PEER} → ${brokerName(kind)} at ${rate}/s: ${count - probe.count(run)} of ${count} messages had not ` +
                'reached the consumer 60 s after the last one that did; their latency is left out.',
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
          config: 'peer-pgto',
          label: `peer: ${PEER}, polling (${PEER_POLL_MS} ms, its default)`,
          offeredRate: rate,
          achievedRate: summarize(runs.map((x) => x.achieved)).median,
          p50: each(50),
          p95: each(95),
          p99: each(99),
          max: summarize(runs.map((x) => Math.max(...x.latencies))),
          samplesPerRun: runs[0]?.latencies.length ?? 0,
        });
        recordLatency(context, kind, rate);
      }
    } finally {
      await stop?.();
      await consumer?.stop();
      await writer.close();
    }
  });
}

function recordLatency(context: ScenarioContext, kind: TransportKind, rate: number): void {
  const find = (config: string) =>
    context.results.latency.find(
      (p) => p.transport === kind && p.config === config && p.offeredRate === rate,
    );
  const peer = find('peer-pgto');
  const ours = find('wakeup');
  if (!peer) return;
  const figure: Figure = {
    scenario: '6. Peer',
    name: `p99 commit → handler start at ${rate}/s, ${brokerName(kind)}: this library (default, figure 2) vs ${PEER}`,
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
