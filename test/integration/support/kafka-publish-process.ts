/**
 * A process that publishes through the library's Kafka transport and exits, for tests of what it prints on
 * stderr (issue 37 item 6: kafkajs's TimeoutNegativeWarning on Node 24) and of the producer clients on another
 * Node (guide 03: @platformatic/kafka on Node 20). Configured by environment: TOPICS (comma-separated, created
 * by the transport: topology `declare`), PRODUCER_CLIENT (`transport.producerClient`, default kafkajs), ROUNDS
 * (default 3). Publishes to every topic at once, ROUNDS rounds (the idempotent producer's one request in
 * flight queues the others), prints READY with the Node version it ran on and exits.
 * Run with: node -r ts-node/register/transpile-only -r tsconfig-paths/register kafka-publish-process.ts
 */
import 'reflect-metadata';
// The transport alone, without Nest or a database: what the test reads is what kafkajs makes Node print.
// eslint-disable-next-line no-restricted-imports -- KafkaTransport is not exported
import { KafkaTransport } from '../../../libs/messaging/src/transports/kafka/kafka-transport';
import type { KafkaProducerClient } from 'nest-reliable-messaging';
import { infraEnv } from '../../harness/infra';
import { orderMessage } from './raw-messages';

async function main(): Promise<void> {
  const topics = (process.env.TOPICS ?? '').split(',').filter(Boolean);
  const producerClient = (process.env.PRODUCER_CLIENT ?? 'kafkajs') as KafkaProducerClient;
  const rounds = Number(process.env.ROUNDS ?? 3);
  const transport = new KafkaTransport({
    clientId: 'publish-process',
    brokers: infraEnv().kafkaBrokers,
    connectionTimeoutMs: 3_000,
    sessionTimeoutMs: 10_000,
    numPartitions: 1,
    replicationFactor: 1,
    concurrency: 1,
    topology: 'declare',
    producerClient,
  });
  for (let round = 0; round < rounds; round++) {
    const outcomes = await transport.publish(
      topics.map((topic, i) => orderMessage(topic, { customer: `c${i}`, seq: round })),
    );
    if (outcomes.some((o) => o.status !== 'CONFIRMED')) throw new Error(JSON.stringify(outcomes));
  }
  await transport.close();
  process.stdout.write(`READY ${producerClient} on Node ${process.versions.node}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
