/**
 * What the demo services cost at a rate (issue 39: "the demo services at 200 posts/s under half the
 * machine"): post-service and subscribe-service as processes (the compiled apps, as the e2e tests run them),
 * `POST /posts` at the offered rate from this process over keep-alive HTTP (an author nobody follows, as in
 * the run), for SECONDS after a warm-up. Measured over the window:
 *
 * - CPU time per post of post-service, subscribe-service, PostgreSQL's backends of their two databases, the
 *   broker's server process and this process (/proc, `lib/process-cpu.ts`), and how busy the machine's cores
 *   were (/proc/stat);
 * - the HTTP answer's p50 / p99, and every post handled by subscribe-service (its inbox) at the end;
 * - the machine's speed beside them: one core's SHA-256 rate.
 *
 *   npx tsx bench/demo-cost.ts [kafka|rabbitmq] [--rate 200] [--seconds 20] [--relay poll|logical]
 *                              [--cpu-prof DIR]   (V8 profiles of both services, written when they stop)
 *
 * With DEMO_COST_LOG_STATEMENTS=1 the two databases log every statement (`log_statement = all`, set on the
 * databases only, in the server's log): how the round trips per post were counted.
 *
 * Figures, never assertions; bench/README "The demo's cost" quotes runs. Works in databases of its own
 * (`bench_demo_post_…`, `bench_demo_sub_…`), dropped at the end.
 */
import 'reflect-metadata';
import * as http from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { BlogStack } from '../tools/demo/blog-stack';
import { buildServices, REPO_ROOT } from '../tools/demo/build-services';
import { infraEnv } from '../tools/infra/env';
import { startPrivatePostgres, LOGICAL_DECODING_SETTINGS } from '../test/harness/postgres-cluster';
import { brokerPids, CpuGroup, ProcessCpuMeter } from './lib/process-cpu';
import { coreSpeedMiBps } from './lib/machine';

interface Options {
  transport: 'kafka' | 'rabbitmq';
  rate: number;
  seconds: number;
  relay: 'poll' | 'logical';
  cpuProf?: string;
}

function parse(argv: string[]): Options {
  const options: Options = { transport: 'kafka', rate: 200, seconds: 20, relay: 'poll' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === 'kafka' || arg === 'rabbitmq') options.transport = arg;
    else if (arg === '--rate') options.rate = Number(argv[++i]);
    else if (arg === '--seconds') options.seconds = Number(argv[++i]);
    else if (arg === '--relay') options.relay = argv[++i] as Options['relay'];
    else if (arg === '--cpu-prof') options.cpuProf = path.resolve(argv[++i]);
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!(options.rate > 0) || !(options.seconds > 0)) throw new Error('--rate and --seconds must be positive');
  if (options.relay !== 'poll' && options.relay !== 'logical') throw new Error('--relay is poll or logical');
  return options;
}

/** /proc/stat's busy and total ticks of all cores. */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** POSTs `count` posts at `rate`/s (scheduled, not closed-loop: a slow answer does not delay the next). */
async function offer(
  agent: http.Agent,
  url: URL,
  rate: number,
  count: number,
  author: number,
): Promise<{ answers: number[]; failed: number }> {
  const answers: number[] = [];
  let failed = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = JSON.stringify({ authorId: author, title: `post ${i}`, content: 'x'.repeat(200) });
    const sent = performance.now();
    pending.push(
      new Promise<void>((resolve) => {
        const request = http.request(
          url,
          { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (response) => {
            response.resume();
            response.on('end', () => {
              if (response.statusCode === 201) answers.push(performance.now() - sent);
              else failed++;
              resolve();
            });
          },
        );
        request.on('error', () => {
          failed++;
          resolve();
        });
        request.end(body);
      }),
    );
  }
  await Promise.all(pending);
  return { answers, failed };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const env = infraEnv();
  const stamp = Date.now().toString(36);
  const names = { post: `bench_demo_post_${stamp}`, subscribe: `bench_demo_sub_${stamp}` };
  const cluster =
    options.relay === 'logical'
      ? await startPrivatePostgres('bench-demo', { settings: LOGICAL_DECODING_SETTINGS })
      : undefined;
  const admin = new Client({ connectionString: env.databaseUrl });
  await admin.connect();
  const serverUrl = (name: string) => {
    const url = new URL(env.databaseUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  await admin.query(`create database ${names.subscribe}`);
  const postUrl = cluster
    ? await cluster.createDatabase(names.post)
    : (await admin.query(`create database ${names.post}`), serverUrl(names.post));
  const subscribeUrl = serverUrl(names.subscribe);
  if (process.env.DEMO_COST_LOG_STATEMENTS === '1')
    for (const name of [names.post, names.subscribe])
      await admin.query(`alter database ${name} set log_statement = 'all'`);
  const build = await buildServices(path.join(REPO_ROOT, '.demo', 'bench-build'), { reuseFresh: true });
  const speed = coreSpeedMiBps();
  let stack: BlogStack | undefined;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  try {
    stack = await BlogStack.start({
      transport: options.transport,
      kafkaBrokers: env.kafkaBrokers,
      amqpUrl: env.amqpUrl,
      databases: { post: { url: postUrl }, subscribe: { url: subscribeUrl } },
      build,
      logDir: mkdtempSync(path.join(os.tmpdir(), 'bench-demo-cost-logs-')),
      relayMode: options.relay,
      env: options.cpuProf ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${options.cpuProf}` } : {},
    });
    const url = new URL('/posts', stack.post.url);
    const author = 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
    const subscribeDb = new Client({ connectionString: subscribeUrl });
    await subscribeDb.connect();
    const inboxCount = async (): Promise<number> =>
      Number((await subscribeDb.query<{ n: string }>('select count(*) as n from messaging_inbox')).rows[0].n);

    // Warm-up: 5 s at the rate (JIT, pools, the consumer's lanes), not measured.
    await offer(agent, url, options.rate, Math.round(options.rate * 5), author);
    const pgPids = async (): Promise<number[]> => {
      const { rows } = await admin.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = any($1)',
        [[names.post, names.subscribe]],
      );
      const own = cluster ? await cluster.query<{ pid: number }>('select pid from pg_stat_activity') : [];
      return [...rows, ...own].map((r) => Number(r.pid));
    };
    const groups: CpuGroup[] = [
      { name: 'post-service', pids: () => [stack!.post.pid!] },
      { name: 'subscribe-service', pids: () => [stack!.subscribe.pid!] },
      { name: 'PostgreSQL', pids: pgPids },
      { name: 'broker', pids: () => brokerPids(options.transport) },
      { name: 'this load generator', pids: () => [process.pid] },
    ];
    const before = await inboxCount();
    const count = Math.round(options.rate * options.seconds);
    const meter = await ProcessCpuMeter.start(groups);
    const ticks0 = machineTicks();
    const t0 = performance.now();
    const { answers, failed } = await offer(agent, url, options.rate, count, author);
    const offeredS = (performance.now() - t0) / 1000;
    // Until every post of the window was handled (its inbox row), at most 60 s.
    const deadline = Date.now() + 60_000;
    while ((await inboxCount()) < before + answers.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const elapsedS = (performance.now() - t0) / 1000;
    const use = await meter.stop();
    const ticks1 = machineTicks();
    const after = await inboxCount();
    await subscribeDb.end();

    answers.sort((a, b) => a - b);
    const busy = (ticks1.busy - ticks0.busy) / (ticks1.total - ticks0.total);
    const perPost = (ms: number) => ((ms * 1000) / answers.length).toFixed(0).padStart(6);
    console.log(
      `demo services on ${options.transport}, relay ${options.relay}: ${count} POST /posts offered at ` +
        `${options.rate}/s in ${offeredS.toFixed(1)} s (${(count / offeredS).toFixed(0)}/s), ${answers.length} ` +
        `answered 201, ${failed} failed, ${after - before} handled by subscribe-service within ` +
        `${elapsedS.toFixed(1)} s`,
    );
    console.log(
      `HTTP answer p50 ${percentile(answers, 50).toFixed(1)} ms, p99 ${percentile(answers, 99).toFixed(1)} ms; ` +
        `cores busy ${(busy * 100).toFixed(0)}% of ${os.cpus().length} (steal counted busy); ` +
        `one core's SHA-256: ${speed.toFixed(0)} MiB/s; load average ${os.loadavg()[0].toFixed(1)}`,
    );
    console.log('CPU per post, µs:');
    let sum = 0;
    for (const [name, ms] of Object.entries(use)) {
      console.log(`  ${perPost(ms)}  ${name}`);
      if (name !== 'this load generator') sum += ms;
    }
    console.log(`  ${perPost(sum)}  all but the load generator`);
  } finally {
    await stack?.stop();
    agent.destroy();
    await admin.query(`drop database if exists ${names.subscribe} with (force)`).catch(() => undefined);
    if (!cluster)
      await admin.query(`drop database if exists ${names.post} with (force)`).catch(() => undefined);
    await admin.end();
    await cluster?.destroy();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
