/**
 * A Kafka leader failover seen from one producer (issue 32; bench/README.md "Failover on a cluster"): a
 * three-broker cluster with three controllers of its own (the cluster suite's shape and settings), one
 * kafkajs producer configured like the relay's (idempotent, one request in flight, acks=all, the same
 * retries) sending small batches one after the other, and KILLS times the leader of `probe[0]` SIGKILLed,
 * watched until the survivors name new leaders with the dead node out of every ISR, then restarted.
 *
 *   npx tsx bench/probe-failover.ts          (KILLS=3 by default)
 *
 * Prints, in seconds after each kill: kafkajs's retries, each send that failed or took over 150 ms, when the
 * brokers were done; at the end every "Fencing broker" line of the controllers' logs (which node, when).
 */
import { Kafka, logLevel, Producer } from 'kafkajs';
import { readFileSync } from 'node:fs';
import { KafkaCluster } from '../tools/infra/kafka-cluster';

const KILLS = Number(process.env.KILLS ?? 3);
const TOPIC = 'probe';
const RETRY = { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds since the current kill; undefined between kills (nothing is printed then). */
let killedAt: number | undefined;
const since = () => (((Date.now() - (killedAt ?? 0)) / 1000).toFixed(2) + ' s').padStart(7);

function producerOf(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    retry: RETRY,
  });
}

/** Sends batches of four, one after the other, like the relay's rounds; a failed send drops the producer. */
async function sendLoop(kafka: Kafka, stopped: () => boolean): Promise<void> {
  let producer = producerOf(kafka);
  await producer.connect();
  for (let n = 0; !stopped(); await sleep(60)) {
    const started = Date.now();
    const messages = Array.from({ length: 4 }, () => ({ key: `k${n++ % 50}`, value: 'x'.repeat(300) }));
    try {
      await producer.send({ topic: TOPIC, acks: -1, messages });
      if (killedAt !== undefined && Date.now() - started > 150)
        console.log(`${since()}  send confirmed after ${Date.now() - started} ms`);
    } catch (error) {
      if (killedAt !== undefined)
        console.log(`${since()}  send failed after ${Date.now() - started} ms: ${(error as Error).message}`);
      await producer.disconnect().catch(() => undefined);
      producer = producerOf(kafka);
      await producer.connect().catch(() => undefined);
    }
  }
  await producer.disconnect();
}

/** Polls the survivors until every partition has a live leader and the dead node is in no ISR. */
async function watchBrokers(cluster: KafkaCluster, dead: number): Promise<void> {
  const survivors = cluster.nodes.filter((n) => cluster.nodeIdOf(n) !== dead).flatMap((n) => n.brokers);
  const admin = new Kafka({
    clientId: 'probe-watch',
    brokers: survivors,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    for (let i = 0; i < 200; i++, await sleep(50)) {
      const { topics } = await admin.fetchTopicMetadata({ topics: [TOPIC] }).catch(() => ({ topics: [] }));
      const partitions = topics[0]?.partitions ?? [];
      if (partitions.length > 0 && partitions.every((p) => p.leader !== dead && !p.isr.includes(dead))) {
        console.log(`${since()}  brokers done: new leaders, node ${dead} out of every ISR`);
        return;
      }
    }
    console.log(`${since()}  brokers not done after 10 s`);
  } finally {
    await admin.disconnect();
  }
}

async function main(): Promise<void> {
  const cluster = await KafkaCluster.start(3, { controllers: 3 });
  let stopped = false;
  try {
    const admin = cluster.kafka().admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: TOPIC, numPartitions: 6, replicationFactor: 3 }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    const kafka = new Kafka({
      clientId: 'probe',
      brokers: cluster.brokers,
      connectionTimeout: 3_000,
      requestTimeout: 10_000,
      retry: RETRY,
      logLevel: logLevel.ERROR,
      logCreator:
        () =>
        ({ log }) => {
          if (killedAt !== undefined) console.log(`${since()}  kafkajs: ${String(log.message)}`);
        },
    });
    const sending = sendLoop(kafka, () => stopped);
    for (let k = 1; k <= KILLS; k++) {
      await sleep(8_000);
      const node = await cluster.leaderOf(TOPIC, 0);
      const dead = cluster.nodeIdOf(node);
      console.log(`kill ${k}: node ${dead}, leader of ${TOPIC}[0]`);
      killedAt = Date.now();
      await node.crash();
      await watchBrokers(cluster, dead);
      await sleep(5_000);
      killedAt = undefined;
      await node.start(240_000);
      await sleep(10_000);
    }
    stopped = true;
    await sending;
    for (const node of [...cluster.controllers, ...cluster.nodes]) {
      const fenced = readFileSync(node.logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes('Fencing broker'));
      fenced.forEach((line) => console.log(`controller log: ${line.slice(0, 160)}`));
    }
  } finally {
    stopped = true;
    await cluster.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
