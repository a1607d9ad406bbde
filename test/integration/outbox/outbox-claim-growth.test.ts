import { DataSource } from 'typeorm';
import { messagingDialect } from 'nest-reliable-messaging/testing';
import { padding } from '../../../bench/lib/bench-event';
import { BenchDialect, BenchOutbox, openBenchOutbox } from '../../../bench/lib/bench-outbox';
import { infraEnv } from '../../harness/infra';

const SENT = 100_000;
const PENDING = 1_000;
const BATCH = 200;
const KEYS = 100;
const RUNS = 7;
/**
 * The bound: generous for a shared two-core machine (the bench's target is 1.5×; it measured 0.92× on
 * MariaDB; this test saw 2.0× at a load average of 24), below what a claim that reads the sent rows costs
 * (the bench's key index that walked them: 56×; the claim forced onto the primary key, as the planner would
 * walk it without the hint: 12× at that load).
 */
const MAX_RATIO = 5;
/** Below this a claim's time is noise on a loaded machine: the ratio is taken against at least it. */
const FLOOR_MS = 10;

/**
 * Guide 04's figure ("What replaces partial indexes, measured"): a claim of 200 among 1,000 pending rows costs
 * about the same whether the table also holds no sent rows or 100,000, on MariaDB and PostgreSQL: the claim
 * reads the pending rows, never a sent one. The library's own claim (`OutboxStore.claim`) on an outbox filled
 * as the bench's growth scenario fills it (bench/lib/bench-outbox.ts), median of seven claims after three
 * that warm the caches.
 */
describe('The outbox claim beside sent rows', () => {
  // claim: C-98
  it.each(['mariadb', 'postgres'] as BenchDialect[])(
    '%s: a claim among pending rows costs about the same beside 100,000 sent rows as beside none',
    async (dialect) => {
      const outbox: BenchOutbox = await openBenchOutbox(dialect, 'claim_growth', infraEnv().databaseUrl);
      const dataSource = new DataSource({ ...outbox.connection, logging: false });
      try {
        await dataSource.initialize();
        await dataSource.runMigrations();
        const store = messagingDialect(dataSource).outboxStore(dataSource);
        const pad = padding(512);
        const claimTime = async (): Promise<number> => {
          await outbox.fill({ destination: 'claim_growth', rows: PENDING, keys: KEYS, pad, run: 'pending' });
          await outbox.vacuum();
          await outbox.analyze();
          const times: number[] = [];
          for (let r = -3; r < RUNS; r++) {
            const started = performance.now();
            const claimed = await store.claim(BATCH, 'claim-growth', 30_000);
            const elapsed = performance.now() - started;
            expect(claimed).toHaveLength(BATCH);
            await store.release('claim-growth');
            await outbox.vacuum();
            if (r >= 0) times.push(elapsed);
          }
          await outbox.deletePending();
          return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
        };

        const alone = await claimTime();
        await outbox.fill({
          destination: 'claim_growth',
          rows: SENT,
          keys: KEYS,
          pad,
          run: 'sent',
          sent: true,
        });
        const beside = await claimTime();
        process.stderr.write(
          `${outbox.label}: claim of ${BATCH} among ${PENDING} pending rows: ${alone.toFixed(1)} ms beside ` +
            `0 sent rows, ${beside.toFixed(1)} ms beside ${SENT} (${(beside / alone).toFixed(2)}×)\n`,
        );
        expect(beside).toBeLessThanOrEqual(MAX_RATIO * Math.max(alone, FLOOR_MS));
      } finally {
        if (dataSource.isInitialized) await dataSource.destroy();
        await outbox.drop();
      }
    },
    180_000,
  );
});
