/**
 * A process that publishes through the library's Kafka transport and exits, for tests of what it prints on
 * stderr (issue 37 item 6: kafkajs's TimeoutNegativeWarning on Node 24). Configured by environment: TOPICS
 * (comma-separated, created by the transport: topology `declare`). Publishes to every topic at once, a few
 * rounds (the idempotent producer's one request in flight queues the others), prints READY and exits.
 * Run with: node -r ts-node/register/transpile-only -r tsconfig-paths/register kafka-publish-process.ts
 */
import 'reflect-metadata';
// The transport alone, without Nest or a database: what the test reads is what kafkajs makes Node print.
// eslint-disable-next-line no-restricted-imports -- KafkaTransport is not exported
import { KafkaTransport } from '../../../libs/messaging/src/transports/kafka/kafka-transport';
import { infraEnv } from '../../harness/infra';
import { orderMessage } from './raw-messages';

async function main(): Promise<void> {
  const topics = (process.env.TOPICS ?? '').split(',').filter(Boolean);
  const transport = new KafkaTransport({
    clientId: 'publish-process',
    brokers: infraEnv().kafkaBrokers,
    connectionTimeoutMs: 3_000,
    sessionTimeoutMs: 10_000,
    numPartitions: 1,
    replicationFactor: 1,
    concurrency: 1,
    topology: 'declare',
  });
  for (let round = 0; round < 3; round++) {
    const outcomes = await transport.publish(
      topics.map((topic, i) => orderMessage(topic, { customer: `c${i}`, seq: round })),
    );
    if (outcomes.some((o) => o.status !== 'CONFIRMED')) throw new Error(JSON.stringify(outcomes));
  }
  await transport.close();
  process.stdout.write('READY\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
