import { benchWireMessages } from '../lib/bench-event';
import { publishInBatches } from '../lib/raw-publishers';

import { destinationNames } from 'nest-reliable-messaging/testing';
import { padding } from '../lib/bench-event';
import { trackConsumerDestinations } from '../lib/consumer-app';
import { benchName, openClient } from '../lib/databases';
import { fillOutbox, pendingCount } from '../lib/outbox-fill';
import { TransportKind } from '../lib/plan';
import { ProbeProcess, startConsumerProcess, startRelayProcess } from '../lib/probe-process';

import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize, Summary } from '../lib/stats';
import { now, sleep, within } from '../lib/time';

/**
 * The relays' poll. An instance's drain stops at keys another instance has in flight (a key's later rows
 * wait until its earlier ones are marked sent), and nothing in its own process wakes it again; in
 * production that is a commit in its process or its safety poll (10 s by default). Here the bench wakes
 * every active instance every 100 ms (as the latency figure's `poll 100 ms` configuration would), with one
 * instance as with four.
 */
const POLL_MS = 100;

/**
 * 8. How it scales on one outbox: the aggregate relay throughput of 1, 2 and 4 relay instances (each a
 * process of its own, as service replicas are) draining one outbox of N rows, and the consumer throughput
 * of 1 and 2 instances (processes) in one group, each as a ratio to one instance, measured in the same run.
 */
export const scaling: Scenario = {
  name: 'scaling',
  steps: (plan) =>
    plan.transports.length * plan.scaling.runs * (plan.scaling.relays.length + plan.scaling.consumers.length),
  async run(context) {
    for (const kind of context.plan.transports) {
      await relays(context, kind);
      await consumers(context, kind);
    }
  },
};

function brokerName(kind: TransportKind): string {
  return kind === 'kafka' ? 'Kafka' : 'RabbitMQ';
}

async function relays(context: ScenarioContext, kind: TransportKind): Promise<void> {
  const { plan, progress, brokers } = context;
  const { rows, relays: counts, runs } = plan.scaling;
  const { keys, payloadBytes, batchSize } = plan.throughput;
  const schema = benchName(`scale_relay_${kind}`);
  const destination = benchName(`bench_scale_${kind}`);
  const sink = `${destination}.sink`;
  if (kind === 'kafka') await brokers.topic(destination);
  else await brokers.exchange(destination, sink);
  const db = await openClient(context.benchDbUrl);
  await db.query(`create schema "${schema}"`);
  const processes: ProbeProcess[] = [];
  const rates = new Map<number, number[]>(counts.map((n) => [n, []]));
  try {
    // One after the other: the first runs the migrations, the others find them done.
    for (let i = 0; i < Math.max(...counts); i++)
      processes.push(
        await startRelayProcess(context.probes, kind, destination, {
          databaseUrl: context.benchDbUrl,
          schema,
          batchSize,
        }),
      );
    const pad = padding(payloadBytes);
    for (let r = 0; r < runs; r++) {
      // Alternate the order of the instance counts from run to run.
      for (const n of r % 2 === 0 ? counts : [...counts].reverse()) {
        progress.step(`8. scaling: ${n} relay instance(s) → ${kind}, run ${r + 1}/${runs} (${rows} rows)`);
        const active = processes.slice(0, n);
        const before = active.map((p) => p.confirmed);
        const confirmed = () => active.reduce((sum, p, i) => sum + p.confirmed - before[i], 0);
        await fillOutbox(db, schema, { destination, rows, keys, pad, run: `scale${r}_${n}` });
        await db.query(`analyze "${schema}".messaging_outbox`);
        const started = now();
        active.forEach((p) => p.wake());
        let polled = started;
        await within(
          (async () => {
            while (confirmed() < rows) {
              progress.update(confirmed(), rows, 'confirmed');
              await sleep(20);
              if (now() - polled >= POLL_MS) {
                active.forEach((p) => p.wake()); // each instance's poll
                polled = now();
              }
            }
          })(),
          120_000 + rows * 10,
          `${n} relays draining ${rows} rows`,
        );
        rates.get(n)?.push((rows * 1000) / (now() - started));
        const left = await pendingCount(db, schema);
        if (left > 0) throw new Error(`${left} rows still pending after ${n} relays confirmed ${rows}`);
        await db.query(`truncate "${schema}".messaging_outbox`);
        if (kind === 'rabbitmq') await brokers.purgeQueue(sink);
      }
    }
  } finally {
    for (const p of processes) await p.stop();
    await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
    await db.end();
  }
  const one = summarize(rates.get(counts[0]) ?? []);
  for (const n of counts.slice(1)) {
    const ours = summarize(rates.get(n) ?? []);
    context.results.figures.push({
      scenario: '8. Scaling',
      name: `relay → ${brokerName(kind)}, ${n} instances (processes) on one outbox of ${rows} rows, batch ${batchSize}: aggregate msg/s`,
      unit: 'msg/s',
      ours,
      baseline: { name: `${counts[0]} instance, the same outbox`, value: one },
      ratio: ratio(ours.median, one.median),
    });
  }
}

async function consumers(context: ScenarioContext, kind: TransportKind): Promise<void> {
  const { plan, progress, brokers } = context;
  const { consumers: counts, messages: count, runs } = plan.scaling;
  const { keys, payloadBytes } = plan.throughput;
  const schema = benchName(`scale_cons_${kind}`);
  const db = await openClient(context.benchDbUrl);
  await db.query(`create schema "${schema}"`);
  const rates = new Map<number, number[]>(counts.map((n) => [n, []]));
  try {
    for (let r = 0; r < runs; r++) {
      for (const n of r % 2 === 0 ? counts : [...counts].reverse()) {
        progress.step(
          `8. scaling: ${n} consumer instance(s), ${kind}, run ${r + 1}/${runs} (${count} messages)`,
        );
        // A destination and a group per run: a new Kafka group reads its topic from the start.
        const destination = benchName(`bench_scale_cons_${kind}`);
        const group = benchName('bench_scale_group');
        trackConsumerDestinations(brokers, kind, destination, group);
        if (kind === 'kafka') await brokers.topic(destination);
        else await brokers.exchange(destination, destinationNames.workQueue(destination, group));
        const processes: ProbeProcess[] = [];
        try {
          for (let i = 0; i < n; i++)
            processes.push(
              await startConsumerProcess(context.probes, brokers, kind, destination, {
                databaseUrl: context.benchDbUrl,
                schema,
                group,
              }),
            );
          // Every member has its share before the measured messages: a few through each, then a pause.
          const warm = `warm_${r}_${n}`;
          await publishInBatches(kind, benchWireMessages(warm, destination, 30, keys, padding(payloadBytes)));
          await waitForAll(processes, warm, 30, 60_000);
          await sleep(1_000);
          const run = `scale_${r}_${n}`;
          await publishInBatches(
            kind,
            benchWireMessages(run, destination, count, keys, padding(payloadBytes)),
          );
          await waitForAll(processes, run, count, 60_000, (done) => progress.update(done, count, 'handled'));
          const starts = processes.flatMap((p) => [...p.probe.startsOf(run).values()]);
          rates.get(n)?.push(((count - 1) * 1000) / (Math.max(...starts) - Math.min(...starts)));
        } finally {
          for (const p of processes) await p.stop();
        }
      }
    }
  } finally {
    await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
    await db.end();
  }
  const one = summarize(rates.get(counts[0]) ?? []);
  for (const n of counts.slice(1)) {
    const ours: Summary = summarize(rates.get(n) ?? []);
    context.results.figures.push({
      scenario: '8. Scaling',
      name: `consumer with the inbox, ${brokerName(kind)}, ${n} instances (processes) in one group, ${count} messages: aggregate msg/s`,
      unit: 'msg/s',
      ours,
      baseline: { name: `${counts[0]} instance in the group`, value: one },
      ratio: ratio(ours.median, one.median),
    });
  }
}

/** Resolves once the instances together handled `count` distinct messages of `run`. */
async function waitForAll(
  processes: readonly ProbeProcess[],
  run: string,
  count: number,
  stallMs: number,
  onProgress?: (done: number) => void,
): Promise<void> {
  const handled = () => new Set(processes.flatMap((p) => [...p.probe.startsOf(run).keys()])).size;
  let last = -1;
  let lastChange = Date.now();
  while (handled() < count) {
    const done = handled();
    if (done !== last) {
      last = done;
      lastChange = Date.now();
      onProgress?.(done);
    }
    if (Date.now() - lastChange > stallMs)
      throw new Error(
        `Only ${done} of ${count} messages of ${run} reached the handlers (stalled ${stallMs} ms)`,
      );
    await sleep(50);
  }
}
