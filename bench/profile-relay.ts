/**
 * Where a relay round's time goes (issue 32): the library's relay drains ROWS outbox rows (default 20,000;
 * 1 KiB payloads, 100 keys, batches of 200) to Kafka while its claims, publishes and separate marks are
 * timed, with a CPU profile of the drain; then the raw kafkajs producer publishes the same messages in the
 * same batches, as figure 1's baseline.
 *
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/profile-relay.ts [postgres|mariadb]
 *
 * PROFILE=0 runs the drain without the profiler (which costs the relay about a tenth of its CPU).
 *
 * Prints the rates, the relay process's CPU per message, and the claims', publishes' and marks' times; writes
 * the profile to `bench/results/tmp/relay-<database>.cpuprofile` (open it in Chrome DevTools).
 */
import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  MESSAGING_TRANSPORT,
  MessageTransport,
  OutboxRelay,
  OutboxStore,
} from 'nest-reliable-messaging/testing';
import { infraEnv } from '../tools/infra/env';
import { createBenchApp } from './lib/bench-app';
import { describeLoad, measureMachine, processesCpuMs } from './lib/machine';
import { padding } from './lib/bench-event';
import { BenchDialect, openBenchOutbox } from './lib/bench-outbox';
import { BrokerFixtures } from './lib/brokers';
import { benchName, BenchDatabases } from './lib/databases';
import { rawPublisher } from './lib/raw-publishers';
import { now } from './lib/time';

type Timed = { ms: number; count: number };

const isPostgres = (cmdline: string) => cmdline.startsWith('postgres');
const isKafka = (cmdline: string) => cmdline.includes('kafka.Kafka');

/**
 * Runs `work` and says what the machine's cores did meanwhile: how busy, and the shares of PostgreSQL's and
 * the Kafka broker's processes (the relay's pool keeps its PostgreSQL backends alive throughout).
 */
async function onTheMachine(work: () => Promise<void>): Promise<string> {
  const started = now();
  const [postgres, kafka] = [processesCpuMs(isPostgres), processesCpuMs(isKafka)];
  const { load } = await measureMachine(work);
  if (!load) return 'not readable here';
  const share = (before: number, match: (cmdline: string) => boolean) =>
    `${Math.round(((processesCpuMs(match) - before) * 100) / ((now() - started) * os.cpus().length))}%`;
  return (
    `${describeLoad(load)}; PostgreSQL ${share(postgres, isPostgres)} and Kafka ${share(kafka, isKafka)} ` +
    `of all cores, the rest this process and others`
  );
}

/** Replaces `target[method]` with a version that adds its duration to `into`. */
function time(target: object, method: string, into: Timed): void {
  const host = target as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = host[method].bind(target);
  host[method] = async (...args: unknown[]) => {
    const started = now();
    try {
      return await original(...args);
    } finally {
      into.ms += now() - started;
      into.count += 1;
    }
  };
}

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, (error, result) => (error ? reject(error) : resolve(result as T))),
  );
}

async function main(): Promise<void> {
  const dialect = (process.argv[2] ?? 'postgres') as BenchDialect;
  const rows = Number(process.env.ROWS ?? 20_000);
  const profiling = process.env.PROFILE !== '0';
  const databases = new BenchDatabases(infraEnv().databaseUrl);
  const brokers = new BrokerFixtures();
  const destination = benchName('profile_relay');
  brokers.trackTopics(destination);
  const outbox = await openBenchOutbox(dialect, 'profile', await databases.create(benchName('profile')));
  const app = await createBenchApp({
    connection: outbox.connection,
    transport: 'kafka',
    relay: { batchSize: 200, pollIntervalMs: 3_600_000 },
  });
  try {
    const relay = app.get(OutboxRelay);
    const transport = app.get<MessageTransport>(MESSAGING_TRANSPORT);
    await transport.ensureDestinations([destination]);
    const claims: Timed = { ms: 0, count: 0 };
    const publishes: Timed = { ms: 0, count: 0 };
    const marks: Timed = { ms: 0, count: 0 };
    time(app.get(OutboxStore), 'claim', claims);
    time(app.get(OutboxStore), 'markSent', marks);
    time(transport, 'publish', publishes);
    const drain = (count: number) =>
      new Promise<void>((resolve) => {
        let confirmed = 0;
        const stop = relay.onRound((round) => {
          confirmed += round.confirmed;
          if (confirmed < count) return;
          stop();
          resolve();
        });
        relay.wake();
      });
    const pad = padding(1024);
    await outbox.fill({ destination, rows: 400, keys: 100, pad, run: 'warm-up' });
    await drain(400);
    [claims, publishes, marks].forEach((t) => Object.assign(t, { ms: 0, count: 0 }));
    await outbox.fill({ destination, rows, keys: 100, pad, run: 'relay' });
    await outbox.analyze();

    const session = profiling ? new Session() : undefined;
    if (session) {
      session.connect();
      await post(session, 'Profiler.enable');
      await post(session, 'Profiler.start');
    }
    const cpuBefore = process.cpuUsage();
    const started = now();
    const machine = await onTheMachine(() => drain(rows));
    const relayMs = now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const file = path.join(__dirname, 'results', 'tmp', `relay-${dialect}.cpuprofile`);
    if (session) {
      const { profile } = await post<{ profile: unknown }>(session, 'Profiler.stop');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
    }

    await outbox.fill({ destination, rows, keys: 100, pad, run: 'raw' });
    const messages = await outbox.pendingWireMessages();
    const raw = await rawPublisher('kafka');
    const rawCpuBefore = process.cpuUsage();
    const rawStarted = now();
    const rawMachine = await onTheMachine(async () => {
      for (let i = 0; i < messages.length; i += 200) await raw.publish(messages.slice(i, i + 200));
    });
    const rawMs = now() - rawStarted;
    const rawCpu = process.cpuUsage(rawCpuBefore);
    await raw.close();

    const each = (t: Timed) => (t.count > 0 ? `${(t.ms / t.count).toFixed(1)} ms each` : 'none');
    const rate = (ms: number) => Math.round((rows * 1000) / ms).toLocaleString('en-US');
    console.log(
      [
        `${dialect} → Kafka, ${rows} rows, load average ${os.loadavg()[0].toFixed(1)}:`,
        `  relay ${rate(relayMs)} msg/s, raw kafkajs producer ${rate(rawMs)} msg/s: ${(rawMs / relayMs).toFixed(2)}×`,
        `  relay process CPU ${((cpu.user + cpu.system) / rows).toFixed(1)} µs per message ` +
          `(${Math.round(((cpu.user + cpu.system) / 1000 / relayMs) * 100)}% of a core${profiling ? ', profiler included' : ''}); ` +
          `raw producer ${((rawCpu.user + rawCpu.system) / rows).toFixed(1)} µs per message ` +
          `(${Math.round(((rawCpu.user + rawCpu.system) / 1000 / rawMs) * 100)}% of a core)`,
        `  claims (${claims.count}, up to 400 rows): ${each(claims)}, ${Math.round((claims.ms / relayMs) * 100)}% of the drain`,
        `  publishes (${publishes.count}, up to 200 messages): ${each(publishes)}, ${Math.round((publishes.ms / relayMs) * 100)}% of the drain (beside the claims)`,
        `  marks on their own (${marks.count}): ${each(marks)}`,
        `  the machine's ${os.cpus().length} cores while the relay drained: ${machine}`,
        `  while the raw producer published: ${rawMachine}`,
        profiling
          ? `  CPU profile of the drain: ${path.relative(process.cwd(), file)}`
          : '  (PROFILE=0: no profile)',
      ].join('\n'),
    );
  } finally {
    await app.close();
    await outbox.drop();
    await brokers.cleanup();
    await databases.dropAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
