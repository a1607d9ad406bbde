import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { BlogStack } from '../../tools/demo/blog-stack';
import { buildServices, REPO_ROOT } from '../../tools/demo/build-services';
import { infraEnv } from '../../tools/infra/env';
import { benchName, openClient } from '../lib/databases';
import { MemoryProbe, MemorySample } from '../lib/memory-probe';
import { TransportKind } from '../lib/plan';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize } from '../lib/stats';
import { now, sleep } from '../lib/time';

/** Heap after ÷ heap before: growth beyond this is more than noise (a collection runs before each sample). */
const TARGET = 1.1;
const MIB = 1024 * 1024;
/** Authors the messages are spread over (the event's key): the consumer's keyed lanes work side by side. */
const AUTHORS = 100;

/**
 * 7. Memory of the demo services: post-service and subscribe-service as processes (the compiled apps, as
 * the e2e tests run them), each sampled after a full garbage collection (`lib/memory-probe.ts`) once a
 * warm-up went through, every 10% of the way, and after `plan.memory.messages` PostCreated events went
 * through both: written into post-service's outbox in chunks (as `PostsService.create` writes them, without
 * the HTTP request), published by its relay, handled by subscribe-service's `@IdempotentHandler` (inbox
 * record and one notification for the one subscriber of each author). Not in the default run (it takes
 * minutes): `--only memory`.
 */
export const memory: Scenario = {
  name: 'memory',
  steps: (plan) => plan.transports.length * (2 + plan.memory.samples),
  async run(context) {
    for (const kind of context.plan.transports) await runOn(context, kind);
  },
};

interface Sampled {
  readonly delivered: number;
  readonly post: MemorySample;
  readonly subscribe: MemorySample;
}

async function runOn(context: ScenarioContext, kind: TransportKind): Promise<void> {
  const { plan, progress, databases } = context;
  const { messages, warmUp, chunk, samples } = plan.memory;
  const env = infraEnv();
  progress.step(`7. memory ${kind}: building and starting post-service and subscribe-service`);
  const build = await buildServices(path.join(REPO_ROOT, '.demo', 'bench-build'), { reuseFresh: true });
  const postName = benchName('bench_mem_post');
  const subscribeName = benchName('bench_mem_sub');
  const postUrl = await databases.create(postName);
  const subscribeUrl = await databases.create(subscribeName);
  const probe = new MemoryProbe();
  let stack: BlogStack | undefined;
  let postDb: Client | undefined;
  let subscribeDb: Client | undefined;
  try {
    stack = await BlogStack.start({
      transport: kind,
      kafkaBrokers: env.kafkaBrokers,
      amqpUrl: env.amqpUrl,
      databases: { post: { url: postUrl }, subscribe: { url: subscribeUrl } },
      build,
      logDir: mkdtempSync(path.join(os.tmpdir(), 'bench-memory-logs-')),
      env: probe.env,
    });
    postDb = await openClient(postUrl);
    subscribeDb = await openClient(subscribeUrl);
    // One subscriber follows every author: each event is one notification row.
    const subscriber = 1 + Math.floor(Math.random() * 1_000_000);
    const firstAuthor = 1 + Math.floor(Math.random() * 1_000_000_000);
    for (let a = 0; a < AUTHORS; a++) {
      const answer = await stack.client.subscribe(subscriber, firstAuthor + a);
      if (answer.status !== 201 && answer.status !== 200)
        throw new Error(`POST /subscriptions answered ${answer.status} ${answer.error ?? ''}`);
    }
    const feeder = new Feeder(postDb, subscribeDb, subscriber, firstAuthor, chunk);
    const sampleBoth = async (delivered: number): Promise<Sampled> => ({
      delivered,
      post: await probe.sample(stack!.post.pid!),
      subscribe: await probe.sample(stack!.subscribe.pid!),
    });
    const started = await sampleBoth(0);

    progress.step(`7. memory ${kind}: warm-up, ${warmUp.toLocaleString('en-US')} messages`);
    await feeder.feed(warmUp, (done) => progress.update(done, warmUp, 'delivered'));
    const before = await sampleBoth(0);

    const taken: Sampled[] = [before];
    const t0 = now();
    for (let s = 1; s <= samples; s++) {
      const target = Math.round((messages * s) / samples);
      progress.step(
        `7. memory ${kind}: ${target.toLocaleString('en-US')} of ${messages.toLocaleString('en-US')} messages`,
      );
      const upTo = warmUp + target;
      await feeder.feed(upTo - feeder.written, (done) =>
        progress.update(feeder.delivered - warmUp, messages, `delivered (${done} this step)`),
      );
      taken.push(await sampleBoth(feeder.delivered - warmUp));
    }
    const seconds = (now() - t0) / 1000;
    const after = taken[taken.length - 1];
    record(context, kind, messages, seconds, started, before, after, taken);
  } finally {
    await stack?.stop();
    await postDb?.end().catch(() => undefined);
    await subscribeDb?.end().catch(() => undefined);
    await databases.drop(postName).catch(() => undefined);
    await databases.drop(subscribeName).catch(() => undefined);
    probe.remove();
  }
}

/**
 * Writes PostCreated events into post-service's outbox in chunks (the next one once at most one chunk is
 * not handled yet), and counts what subscribe-service notified.
 */
class Feeder {
  written = 0;
  delivered = 0;

  constructor(
    private readonly postDb: Client,
    private readonly subscribeDb: Client,
    private readonly subscriber: number,
    private readonly firstAuthor: number,
    private readonly chunk: number,
  ) {}

  /** Writes `count` more events and resolves once all written so far were handled. */
  async feed(count: number, onProgress: (done: number) => void): Promise<void> {
    const target = this.written + count;
    let stalledSince = Date.now();
    while (this.delivered < target) {
      // At most two chunks ahead of the consumer: it always has a backlog (the relay only polls every
      // 10 s for rows it did not write), and the broker does not hold the whole run.
      if (this.written < target && this.written - this.delivered <= this.chunk) {
        const rows = Math.min(this.chunk, target - this.written);
        await this.write(this.written, rows);
        this.written += rows;
      }
      const delivered = await this.countDelivered();
      if (delivered > this.delivered) stalledSince = Date.now();
      this.delivered = delivered;
      onProgress(this.delivered - (target - count));
      if (Date.now() - stalledSince > 120_000)
        throw new Error(
          `subscribe-service handled no message for 2 min (${delivered} of ${target}; ` +
            `${await this.pending()} still pending in post-service's outbox, ${await this.inboxCount()} in subscribe-service's inbox)`,
        );
      if (this.delivered < target) await sleep(500);
    }
  }

  private async write(first: number, rows: number): Promise<void> {
    await this.postDb.query(
      `insert into messaging_outbox (message_id, destination, type, key, headers, payload, occurred_at)
       select s.id, 'post-create', 'PostCreated', ($1::int + s.i % $2)::text, '{}'::jsonb,
              jsonb_build_object('eventId', s.id, 'postId', s.i + 1, 'authorId', $1::int + s.i % $2,
                                 'title', 'bench post ' || s.i),
              now()
       from (select gen_random_uuid() as id, i from generate_series($3::bigint, $4::bigint) as i) as s`,
      [this.firstAuthor, AUTHORS, first, first + rows - 1],
    );
  }

  private async pending(): Promise<number> {
    const { rows } = await this.postDb.query<{ n: string }>(
      'select count(*) as n from messaging_outbox where sent_at is null',
    );
    return Number(rows[0].n);
  }

  private async inboxCount(): Promise<number> {
    const { rows } = await this.subscribeDb.query<{ n: string }>('select count(*) as n from messaging_inbox');
    return Number(rows[0].n);
  }

  private async countDelivered(): Promise<number> {
    const { rows } = await this.subscribeDb.query<{ n: string }>(
      'select count(*) as n from notifications where subscriber_id = $1',
      [this.subscriber],
    );
    return Number(rows[0].n);
  }
}

function record(
  context: ScenarioContext,
  kind: TransportKind,
  messages: number,
  seconds: number,
  started: Sampled,
  before: Sampled,
  after: Sampled,
  taken: readonly Sampled[],
): void {
  const broker = kind === 'kafka' ? 'Kafka' : 'RabbitMQ';
  const count = messages.toLocaleString('en-US');
  for (const service of ['post', 'subscribe'] as const) {
    const name = `${service}-service`;
    for (const [field, label] of [
      ['heapUsed', 'heap used'],
      ['rss', 'RSS'],
    ] as const) {
      const b = before[service][field] / MIB;
      const a = after[service][field] / MIB;
      const r = ratio(a, b);
      context.results.figures.push({
        scenario: '7. Memory',
        name: `${name} ${label} after ${count} messages over ${broker} (after a full GC)`,
        unit: 'MiB',
        ours: summarize([a]),
        baseline: { name: `the same process after a warm-up, before the ${count}`, value: summarize([b]) },
        ratio: r,
        target: { text: `≤ ${TARGET}× before (no growth beyond noise)`, met: r <= TARGET },
      });
    }
  }
  const mib = (bytes: number) => (bytes / MIB).toFixed(1);
  const usage = (sample: MemorySample) =>
    `${mib(sample.heapUsed)} / ${mib(sample.external)} / ${mib(sample.rss)}`;
  context.results.notes.push(
    `Memory over ${broker}: ${count} PostCreated events through post-service's relay and subscribe-service's ` +
      `inbox consumer in ${Math.round(seconds)} s (${Math.round(messages / seconds)} msg/s). Heap used / ` +
      `external (Buffers and other memory outside the heap) / RSS in MiB (after a full GC), post-service then ` +
      `subscribe-service, at start ${usage(started.post)} and ${usage(started.subscribe)}; at ` +
      taken
        .map((s) => `${s.delivered.toLocaleString('en-US')}: ${usage(s.post)} and ${usage(s.subscribe)}`)
        .join('; ') +
      '.',
  );
}
