import { DataSource } from 'typeorm';
import { MessagingMigrations } from '@app/messaging';
import { messagingDialect } from '@app/messaging/database/messaging-dialect';
import { padding } from '../lib/bench-event';
import { benchName, openClient } from '../lib/databases';
import { fillOutbox, outboxTable } from '../lib/outbox-fill';
import { Scenario } from '../lib/scenario';
import { ratio, summarize, Summary } from '../lib/stats';
import { now } from '../lib/time';

const TARGET = 1.5;
const CHUNK = 100_000;

/**
 * 4. Growth: the time of one claim (`OutboxStore.claim`, the library's own SQL) with `pending` rows waiting,
 * while the table also holds 0, 100k and 1M sent rows (filled with `generate_series`, then vacuumed and
 * analyzed as autovacuum would have). Each run releases its claim and vacuums, so every run starts alike.
 */
export const growth: Scenario = {
  name: 'growth',
  steps: (plan) => plan.growth.sentRows.length,
  async run(context) {
    const { progress } = context;
    const { sentRows, pending, batchSize, runs } = context.plan.growth;
    const { keys, payloadBytes } = context.plan.throughput;
    const schema = benchName('growth');
    const db = await openClient(context.benchDbUrl);
    await db.query(`create schema "${schema}"`);
    const dataSource = new DataSource({
      type: 'postgres',
      url: context.benchDbUrl,
      schema,
      migrations: MessagingMigrations,
      logging: false,
    });
    await dataSource.initialize();
    const table = outboxTable(schema);
    const pad = padding(payloadBytes);
    const steps: Array<{ sent: number; claim: Summary; tableMiB: number }> = [];
    try {
      await dataSource.runMigrations();
      const store = messagingDialect(dataSource).outboxStore(dataSource);
      let sent = 0;
      for (const target of sentRows) {
        progress.step(`4. growth: claim ${batchSize} of ${pending} pending rows beside ${target} sent rows`);
        await db.query(`delete from ${table} where sent_at is null`);
        while (sent < target) {
          const rows = Math.min(CHUNK, target - sent);
          await fillOutbox(db, schema, {
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
        await fillOutbox(db, schema, {
          destination: 'bench_growth',
          rows: pending,
          keys,
          pad,
          run: 'pending',
        });
        await db.query(`vacuum analyze ${table}`);
        const times: number[] = [];
        for (let r = -3; r < runs; r++) {
          const started = now();
          const claimed = await store.claim(batchSize, 'bench-growth', 30_000);
          const elapsed = now() - started;
          if (claimed.length !== Math.min(batchSize, pending))
            throw new Error(`claimed ${claimed.length} rows, expected ${Math.min(batchSize, pending)}`);
          await store.release('bench-growth');
          await db.query(`vacuum ${table}`);
          if (r >= 0) times.push(elapsed); // the first three warm the caches
          progress.update(r + 4, runs + 3, 'claims');
        }
        const { rows } = await db.query<{ bytes: string }>(
          `select pg_total_relation_size('${table}') as bytes`,
        );
        steps.push({
          sent: target,
          claim: summarize(times),
          tableMiB: Math.round(Number(rows[0].bytes) / 2 ** 20),
        });
      }
    } finally {
      await dataSource.destroy();
      await db.query(`drop schema "${schema}" cascade`).catch(() => undefined);
      await db.end();
    }
    const first = steps[0];
    for (const step of steps.slice(1)) {
      const r = ratio(step.claim.median, first.claim.median);
      const last = step === steps[steps.length - 1];
      context.results.figures.push({
        scenario: '4. Growth',
        name: `claim of ${batchSize} among ${pending} pending rows, table also holding ${step.sent.toLocaleString('en-US')} sent rows (${step.tableMiB} MiB)`,
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
  },
};
