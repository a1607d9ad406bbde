import { DataSource } from 'typeorm';
import { messagingDialect } from 'nest-reliable-messaging/testing';
import { padding } from '../lib/bench-event';
import { BenchDialect, openBenchOutbox } from '../lib/bench-outbox';
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
 */
export const growth: Scenario = {
  name: 'growth',
  steps: (plan) => plan.growth.sentRows.length * plan.databases.length,
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
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await outbox.drop();
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
