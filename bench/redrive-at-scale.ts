/**
 * Redrive at scale (issue 40, item 2): what a plan at scale costs on the real brokers, and how the DLQ search
 * does on a deep DLQ. For each broker:
 *
 * 1. a group of GROUP dead letters (default 10,000) with one other message after every 10: `planBulk`, one
 *    approval, `executeBulk`; times, chunks, and the heap's peak above its level before (sampled every 20 ms);
 * 2. a DLQ of DEPTH (default 100,000): `planBulk` of a filter over all of it (the plan's scan), and
 *    `searchHead` by id for the deepest message and for one near the head (what the search reaches today).
 *
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/redrive-at-scale.ts [rabbitmq|kafka] [GROUP] [DEPTH]
 *
 * Figures, never assertions (docs/guide/08-redrive.md quotes a run). Works in resources of its own (a schema
 * of the admin database, queues or topics named `bench_scale_…`) and removes them.
 */
import 'reflect-metadata';
import * as amqp from 'amqplib';
import { Kafka } from 'kafkajs';
import { Client } from 'pg';
import {
  ApproverKeyring,
  generateApproverKeys,
  PostgresBulkPlanStore,
  PostgresRedriveLedger,
  readApproverSigner,
  RedriveBroker,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { parseKeySecret, signApproval, WireMessage } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../tools/infra/env';
import { LOCAL_KEY_SECRET } from '../tools/infra/local-secrets';
import { BROKEN_CODE } from '../test/integration/redrive/support/incident-letters';
import { scaleLetters } from '../test/integration/redrive/support/scale-letters';

const transport = (process.argv[2] ?? 'rabbitmq') as 'rabbitmq' | 'kafka';
const GROUP = Number(process.argv[3] ?? 10_000);
const DEPTH = Number(process.argv[4] ?? 100_000);
const id = `${Date.now().toString(36)}`;
const env = infraEnv();

/** The heap's peak above its level when `work` started, sampled every 20 ms, and the time `work` took. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; peakMiB: number }> {
  global.gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
  const started = performance.now();
  try {
    const value = await work();
    return { value, ms: Math.round(performance.now() - started), peakMiB: (peak - base) / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

const line = (what: string, m: { ms: number; peakMiB: number }, extra = '') =>
  console.log(
    `${transport} ${what}: ${(m.ms / 1000).toFixed(1)} s, heap peak +${m.peakMiB.toFixed(0)} MiB ${extra}`,
  );

interface Broker {
  readonly redrive: RedriveBroker;
  /** Makes the group's DLQ and target; resolves with the DLQ's name. */
  prepare(destination: string): Promise<string>;
  send(letters: readonly WireMessage[]): Promise<void>;
  cleanup(): Promise<void>;
}

async function rabbit(): Promise<Broker> {
  const connection = await amqp.connect(env.amqpUrl);
  const queues: string[] = [];
  return {
    redrive: { kind: 'rabbitmq', url: env.amqpUrl.replace(/\/\/[^@]*@/, '//'), allowPlaintextLocal: true },
    async prepare(destination) {
      const channel = await connection.createChannel();
      const work = `${destination}.billing`;
      await channel.assertQueue(work, { durable: true });
      await channel.assertQueue(`${work}.dlq`, { durable: true });
      await channel.close();
      queues.push(work, `${work}.dlq`);
      return `${work}.dlq`;
    },
    async send(letters) {
      const channel = await connection.createConfirmChannel();
      for (const [i, m] of letters.entries()) {
        channel.sendToQueue(m.destination, m.body, {
          persistent: true,
          headers: m.key === null ? { ...m.headers } : { ...m.headers, 'msg.key': m.key },
        });
        if (i % 5_000 === 4_999) await channel.waitForConfirms();
      }
      await channel.waitForConfirms();
      await channel.close();
    },
    async cleanup() {
      const channel = await connection.createChannel();
      for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
      await connection.close();
    },
  };
}

async function kafka(): Promise<Broker> {
  const client = new Kafka({ brokers: env.kafkaBrokers, logLevel: 0 });
  const admin = client.admin();
  await admin.connect();
  const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const topics: string[] = [];
  return {
    redrive: { kind: 'kafka', brokers: env.kafkaBrokers, allowPlaintextLocal: true },
    async prepare(destination) {
      const dlq = `${destination}.billing.dlq`;
      await admin.createTopics({
        topics: [
          { topic: destination, numPartitions: 1 },
          { topic: dlq, numPartitions: 2 },
        ],
        waitForLeaders: true,
      });
      topics.push(destination, dlq, `${dlq}.archive`);
      return dlq;
    },
    async send(letters) {
      for (let i = 0; i < letters.length; i += 2_000) {
        await producer.send({
          topic: letters[0].destination,
          acks: -1,
          messages: letters.slice(i, i + 2_000).map((m, j) => ({
            key: m.key,
            value: m.body,
            headers: { ...m.headers },
            partition: (i + j) % 2,
          })),
        });
      }
    },
    async cleanup() {
      await producer.disconnect();
      await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

async function main(): Promise<void> {
  const schema = `bench_scale_${id}`;
  const pg = new Client({ connectionString: env.databaseUrl });
  await pg.connect();
  await pg.query(`create schema "${schema}"`);
  const database = { url: env.databaseUrl, schema };
  const broker = transport === 'kafka' ? await kafka() : await rabbit();
  try {
    await PostgresRedriveLedger.migrate(database);
    const ledger = await PostgresRedriveLedger.connect(database);
    const store = await PostgresBulkPlanStore.connect(database);
    const jane = generateApproverKeys('jane');
    const principal = transport === 'kafka' ? 'bench-admin' : 'guest';
    const approvers = ApproverKeyring.parse({
      version: 2,
      people: [
        { name: 'jane', publicKey: jane.publicKey.publicKey },
        { name: principal, accounts: [] },
      ],
    });
    const service = new RedriveService({
      broker: broker.redrive,
      credential: { principal, secret: transport === 'kafka' ? 'local' : 'guest' },
      ledger,
      approvers,
      keySecret: parseKeySecret(LOCAL_KEY_SECRET, 'LOCAL_KEY_SECRET'),
      bulkStore: store,
    });
    const approve = async (plan: Awaited<ReturnType<RedriveService['planBulk']>>) =>
      service.approve(plan, signApproval(plan, readApproverSigner(jane.privateKeyFile), {}, new Date()));
    const selection = { by: 'filter' as const, code: BROKEN_CODE };

    // 1. A group of GROUP: planned once, approved once, executed.
    const destination = `bench_scale_${id}_g`;
    const dlq = await broker.prepare(destination);
    let { letters } = scaleLetters(destination, GROUP, 10, 5);
    const waiting = letters.length;
    await broker.send(letters);
    letters = [];
    const plan = await measured(() => service.planBulk({ source: dlq, selection }));
    line(
      `plan of a group of ${GROUP} in a DLQ of ${waiting}`,
      plan,
      `(plan file ${JSON.stringify(plan.value).length} bytes)`,
    );
    let chunks = 0;
    const run = await measured(async () =>
      service.executeBulk(await approve(plan.value), { onProgress: (p) => (chunks = p.chunks) }),
    );
    line(
      `execution of ${run.value.redriven} in ${chunks} chunks`,
      run,
      `(${Math.round((run.value.redriven * 1000) / run.ms)}/s)`,
    );

    // 2. A DLQ of DEPTH: a filter over all of it, and the search. Sent 5,000 at a time (this process keeps
    // two ids of them), so that what the heap holds while planning is the plan's.
    const deep = `bench_scale_${id}_d`;
    const deepDlq = await broker.prepare(deep);
    const searched: { what: string; messageId: string }[] = [];
    for (let sent = 0; sent < DEPTH;) {
      const count = Math.min(5_000, DEPTH - sent);
      const batch = scaleLetters(deep, count, 10, 5).letters.slice(0, count);
      if (sent <= 999 && sent + count > 999) {
        searched.push({ what: 'the 1,000th message', messageId: batch[999 - sent].headers['msg.id'] });
      }
      await broker.send(batch);
      sent += count;
      if (sent === DEPTH)
        searched.push({ what: 'the deepest message', messageId: batch[count - 1].headers['msg.id'] });
    }
    const filtered = await measured(() =>
      service.planBulk({ source: deepDlq, selection: { by: 'filter', code: 'DOWNSTREAM_DOWN' } }),
    );
    line(`plan of a filter over a DLQ of ${DEPTH} (${filtered.value.bulk?.taken} taken)`, filtered);
    for (const { what, messageId } of searched) {
      const search = await measured(() => service.searchHead(deepDlq, { messageId }));
      line(`search by id for ${what} of ${DEPTH}`, search, `(found ${search.value.letters.length})`);
    }
    await service.close();
    await store.close();
    await ledger.close();
  } finally {
    await broker.cleanup();
    await pg.query(`drop schema "${schema}" cascade`);
    await pg.end();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
