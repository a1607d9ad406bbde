import { DataSource } from 'typeorm';
import { messagingDialect, OutboxStore } from 'nest-reliable-messaging/testing';
import { padding } from '../lib/bench-event';
import { BenchDialect, BenchOutbox, openBenchOutbox } from '../lib/bench-outbox';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize, Summary } from '../lib/stats';
import { now } from '../lib/time';

const TARGET = 1.5;
const CHUNK = 100_000;

/**
 * 4. Growth: the time of one claim (`OutboxStore.claim`, the library's own SQL for the database) with
 * `pending` rows waiting, while the table also holds 0, 100k and 1M sent rows (filled in one statement each,
 * then vacuumed and analyzed as autovacuum would have). Each run releases its claim and vacuums, so every
 * run starts alike. On each database: PostgreSQL keeps the claim flat with partial indexes, MySQL and
 * MariaDB with indexes that put `sent_at` before `id`.
 *
 * Then the scheduled messages (issue 42): the same claim, and the relay's move of `batchSize` due scheduled
 * messages into the outbox (`OutboxStore.moveDueScheduled`), first with no other scheduled message, then beside
 * `scheduledRows` (1,000,000) not yet due.
 */
export const growth: Scenario = {
  name: 'growth',
  steps: (plan) => (plan.growth.sentRows.length + 2) * plan.databases.length,
  async run(context) {
    for (const dialect of context.plan.databases) await runOn(context, dialect);
  },
};

async function runOn(context: ScenarioContext, dialect: BenchDialect): Promise<void> {
  const { progress } = context;
  const { sentRows, pending, batchSize, runs } = context.plan.growth;
  const { keys, payloadBytes } = context.plan.throughput;
  const outbox = await openBenchOutbox(dialect, 'growth', context.benchDbUrl);
  const dataSource = new DataSource({ ...outbox.connection, logging: false });
  const pad = padding(payloadBytes);
  const steps: Array<{ sent: number; claim: Summary; tableMiB: number }> = [];
  let scheduled: ScheduledStep[] = [];
  try {
    await dataSource.initialize();
    await dataSource.runMigrations();
    const store = messagingDialect(dataSource).outboxStore(dataSource);
    let sent = 0;
    for (const target of sentRows) {
      progress.step(
        `4. growth ${outbox.label}: claim ${batchSize} of ${pending} pending rows beside ${target} sent rows`,
      );
      await outbox.deletePending();
      while (sent < target) {
        const rows = Math.min(CHUNK, target - sent);
        await outbox.fill({
          destination: 'bench_growth',
          rows,
          keys,
          pad,
          run: 'sent',
          sent: true,
          firstSeq: sent,
        });
        sent += rows;
        progress.update(sent, target, 'sent rows written');
      }
      await outbox.fill({ destination: 'bench_growth', rows: pending, keys, pad, run: 'pending' });
      await outbox.vacuum();
      await outbox.analyze();
      const times: number[] = [];
      for (let r = -3; r < runs; r++) {
        const started = now();
        const claimed = await store.claim(batchSize, 'bench-growth', 30_000);
        const elapsed = now() - started;
        if (claimed.length !== Math.min(batchSize, pending))
          throw new Error(`claimed ${claimed.length} rows, expected ${Math.min(batchSize, pending)}`);
        await store.release('bench-growth');
        await outbox.vacuum();
        if (r >= 0) times.push(elapsed); // the first three warm the caches
        progress.update(r + 4, runs + 3, 'claims');
      }
      steps.push({ sent: target, claim: summarize(times), tableMiB: await outbox.sizeMiB() });
    }
    scheduled = await measureScheduled(context, outbox, store, pad);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await outbox.drop();
  }
  const [empty, backlog] = scheduled;
  const scheduledRows = backlog.scheduled.toLocaleString('en-US');
  const measures = [
    [`claim of ${batchSize} among ${pending} pending rows`, (s: ScheduledStep) => s.claim],
    [`move of ${batchSize} due scheduled messages into the outbox`, (s: ScheduledStep) => s.move],
  ] as const;
  for (const [what, pick] of measures) {
    const r = ratio(pick(backlog).median, pick(empty).median);
    context.results.figures.push({
      scenario: '4. Growth',
      name: `${outbox.label}: ${what}, beside ${scheduledRows} scheduled messages not yet due`,
      unit: 'ms',
      ours: pick(backlog),
      baseline: { name: 'the same with no other scheduled message', value: pick(empty) },
      ratio: r,
      target: { text: `≤ ${TARGET}× (flat)`, met: r <= TARGET },
    });
  }
  const first = steps[0];
  for (const step of steps.slice(1)) {
    const r = ratio(step.claim.median, first.claim.median);
    const last = step === steps[steps.length - 1];
    context.results.figures.push({
      scenario: '4. Growth',
      name: `${outbox.label}: claim of ${batchSize} among ${pending} pending rows, table also holding ${step.sent.toLocaleString('en-US')} sent rows (${step.tableMiB} MiB)`,
      unit: 'ms',
      ours: step.claim,
      baseline: {
        name: `the same claim with ${first.sent} sent rows (${first.tableMiB} MiB)`,
        value: first.claim,
      },
      ratio: r,
      target: last ? { text: `≤ ${TARGET}× (flat)`, met: r <= TARGET } : undefined,
    });
  }
}

/** The claim's and the move's times with `scheduled` scheduled messages not yet due. */
interface ScheduledStep {
  readonly scheduled: number;
  readonly claim: Summary;
  readonly move: Summary;
}

const DUE = 'bench_growth_due';
const FUTURE = 'bench_growth_future';

/**
 * With the sent rows of the last step and `pending` rows waiting: the claim, and the move of `batchSize` due
 * scheduled messages, with no other scheduled message and then beside `scheduledRows` due in a day or later.
 * Each move's rows are deleted from the outbox after it, so every run starts alike.
 */
async function measureScheduled(
  context: ScenarioContext,
  outbox: BenchOutbox,
  store: OutboxStore,
  pad: string,
): Promise<ScheduledStep[]> {
  const { progress } = context;
  const { pending, batchSize, runs, scheduledRows } = context.plan.growth;
  const { keys } = context.plan.throughput;
  const result: ScheduledStep[] = [];
  for (const scheduled of [0, scheduledRows]) {
    progress.step(
      `4. growth ${outbox.label}: claim ${batchSize} of ${pending} pending rows and move ${batchSize} due scheduled ` +
        `messages beside ${scheduled} not yet due`,
    );
    if (scheduled > 0) {
      await outbox.fillScheduled({ destination: FUTURE, rows: scheduled, keys, pad, dueInSeconds: 86_400 });
    }
    await outbox.analyze();
    const claims: number[] = [];
    const moves: number[] = [];
    for (let r = -3; r < runs; r++) {
      let started = now();
      const claimed = await store.claim(batchSize, 'bench-growth', 30_000);
      const claimMs = now() - started;
      if (claimed.length !== Math.min(batchSize, pending))
        throw new Error(`claimed ${claimed.length} rows, expected ${Math.min(batchSize, pending)}`);
      await store.release('bench-growth');
      await outbox.fillScheduled({ destination: DUE, rows: batchSize, keys, pad, dueInSeconds: -60 });
      started = now();
      const { moved } = await store.moveDueScheduled(1_000);
      const moveMs = now() - started;
      if (moved !== batchSize) throw new Error(`moved ${moved} scheduled messages, expected ${batchSize}`);
      // All of them moved: only the outbox holds them (a delete by destination on the scheduled table would
      // read all of its rows, the backlog's too, and crowd the claim's pages out of the database's cache).
      await outbox.deleteDestination(DUE);
      await outbox.vacuum();
      if (r >= 0) {
        claims.push(claimMs);
        moves.push(moveMs);
      }
      progress.update(r + 4, runs + 3, 'claims and moves');
    }
    result.push({ scheduled, claim: summarize(claims), move: summarize(moves) });
  }
  return result;
}
