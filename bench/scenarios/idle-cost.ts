import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MessagingMigrations } from 'nest-reliable-messaging';
import { createBenchApp } from '../lib/bench-app';
import { BlogPollRelay } from '../lib/blog-poll-relay';
import { benchName } from '../lib/databases';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { StatementSpy } from '../lib/statement-spy';
import { ratio, summarize } from '../lib/stats';
import { sleep } from '../lib/time';
import { XactCounter } from '../lib/xact-counter';

const TARGET = 0.2;
const VERIFY_STATEMENTS = 25;

/** The idle relays, each alone in a database of its own so that PostgreSQL counts its statements apart. */
const SUBJECTS = [
  { id: 'default', name: 'library default (poll 10 s, NOTIFY off)' },
  { id: 'notify', name: 'library with NOTIFY on (poll 10 s, one LISTEN connection)' },
  { id: 'blog', name: 'baseline: blog post relay, 1 s poll' },
] as const;

/**
 * 3. Idle cost: what each relay sends to PostgreSQL while nothing is written, from PostgreSQL's own
 * statistics (`pg_stat_database`), checked against a known number of statements first, with the client-side
 * count beside it. All three idle side by side over the same windows.
 */
export const idleCost: Scenario = {
  name: 'idle',
  steps: (plan) => 1 + windows(plan.mode),
  async run(context) {
    const { progress, databases } = context;
    const names = Object.fromEntries(SUBJECTS.map((s) => [s.id, benchName(`bench_idle_${s.id}`)]));
    const urls: Record<string, string> = {};
    // Side by side: creating (and dropping) a database takes a checkpoint, seconds on a busy server.
    await Promise.all(SUBJECTS.map(async (s) => (urls[s.id] = await databases.create(names[s.id]))));
    const counter = await XactCounter.open(databases.serverUrl);
    const spy = new StatementSpy();
    const stops: Array<() => Promise<void>> = [];
    try {
      progress.step('3. idle cost: checking the count against known statements');
      const check = await counter.verify(names.blog, urls.blog, VERIFY_STATEMENTS);
      context.results.notes.push(
        `Idle cost method check: ${check.sent} autocommit statements sent, pg_stat_database counted ` +
          `${check.counted} transactions, visible after ${Math.round(check.delayMs)} ms.`,
      );
      if (check.counted !== check.sent)
        throw new Error(`pg_stat_database counted ${check.counted} of ${check.sent}`);

      const apps: INestApplicationContext[] = [];
      const app = async (id: string, notify: boolean) => {
        const started = await createBenchApp({
          databaseUrl: urls[id],
          schema: 'public',
          transport: 'kafka',
          relay: { notify },
        });
        apps.push(started);
        stops.push(() => started.close());
      };
      await app('default', false);
      await app('notify', true);
      await migrate(urls.blog);
      const blog = await new BlogPollRelay('kafka', urls.blog, 'public').start();
      stops.push(() => blog.stop());

      const windowMs = context.plan.idle.windowMs / windows(context.plan.mode);
      const rates: Record<string, number[]> = { default: [], notify: [], blog: [] };
      const clientRates: Record<string, number[]> = { default: [], notify: [], blog: [] };
      // Startup statements come in bursts, which backends may report up to 10 s later: let that pass.
      await sleep(context.plan.mode === 'full' ? 12_000 : 1_000);
      spy.start();
      for (let w = 0; w < windows(context.plan.mode); w++) {
        progress.step(`3. idle cost: window ${w + 1} of ${Math.round(windowMs / 1000)} s`);
        const before = await readAll(counter, names);
        const spiedBefore = Object.fromEntries(SUBJECTS.map((s) => [s.id, spy.count(names[s.id])]));
        const started = Date.now();
        while (Date.now() - started < windowMs) {
          await sleep(Math.min(1_000, windowMs - (Date.now() - started)));
          progress.update(Math.round((Date.now() - started) / 1000), Math.round(windowMs / 1000), 's idle');
        }
        const after = await readAll(counter, names);
        const seconds = (Date.now() - started) / 1000;
        for (const s of SUBJECTS) {
          rates[s.id].push((after[s.id] - before[s.id]) / seconds);
          clientRates[s.id].push((spy.count(names[s.id]) - spiedBefore[s.id]) / seconds);
        }
      }
      record(context, rates, clientRates);
    } finally {
      spy.stop();
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
      await counter.close();
      await Promise.all(Object.values(names).map((name) => databases.drop(name).catch(() => undefined)));
    }
  },
};

function windows(mode: 'full' | 'smoke'): number {
  return mode === 'full' ? 3 : 1;
}

async function readAll(counter: XactCounter, names: Record<string, string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const s of SUBJECTS) counts[s.id] = await counter.read(names[s.id]);
  return counts;
}

async function migrate(url: string): Promise<void> {
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: MessagingMigrations,
    logging: false,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}

function record(
  context: ScenarioContext,
  rates: Record<string, number[]>,
  clientRates: Record<string, number[]>,
): void {
  const baseline = summarize(rates.blog);
  for (const s of SUBJECTS.filter((x) => x.id !== 'blog')) {
    const ours = summarize(rates[s.id]);
    context.results.figures.push({
      scenario: '3. Idle cost',
      name: `${s.name}: transactions/s counted by PostgreSQL (client-side: ${summarize(clientRates[s.id]).median.toFixed(2)} statements/s)`,
      unit: 'stmt/s',
      ours,
      baseline: {
        name: `${SUBJECTS[2].name} (client-side ${summarize(clientRates.blog).median.toFixed(2)}/s)`,
        value: baseline,
      },
      ratio: ratio(ours.median, baseline.median),
      target: { text: `≤ ${TARGET} per second`, met: ours.median <= TARGET },
    });
  }
}
