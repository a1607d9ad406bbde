import { benchWireMessages } from '../lib/bench-event';

import { padding } from '../lib/bench-event';
import { benchName } from '../lib/databases';
import { packageVersion } from '../lib/machine';
import { batchProducer, KafkaClientName, readAll } from '../lib/kafka-clients';
import { Scenario, ScenarioContext } from '../lib/scenario';
import { ratio, summarize } from '../lib/stats';
import { now } from '../lib/time';

const NAMES: Record<KafkaClientName, string> = {
  kafkajs: `kafkajs ${packageVersion('kafkajs')}`,
  platformatic: `@platformatic/kafka ${packageVersion('@platformatic/kafka')}`,
};

/**
 * 9. The Kafka client: kafkajs (the library's) beside @platformatic/kafka, on the raw producer figure (N
 * messages of 1 KiB over 100 keys in batches of 200, each confirmed before the next, idempotent, acks=all:
 * figure 1's baseline) and a raw consumer figure (the same N read from the start of the topic by a new
 * group, offsets committed every second after delivery, no work per message). Runs alternate which client
 * goes first. Kafka only.
 */
export const kafkaClient: Scenario = {
  name: 'kafka-client',
  steps: (plan) => (plan.transports.includes('kafka') ? plan.kafkaClient.runs * 2 : 0),
  async run(context) {
    if (!context.plan.transports.includes('kafka')) return;
    await runOn(context);
  },
};

async function runOn(context: ScenarioContext): Promise<void> {
  const { plan, progress, brokers } = context;
  const { messages: count, runs } = plan.kafkaClient;
  const { batchSize, keys, payloadBytes } = plan.throughput;
  const produced: Record<KafkaClientName, number[]> = { kafkajs: [], platformatic: [] };
  const consumed: Record<KafkaClientName, number[]> = { kafkajs: [], platformatic: [] };
  for (let r = 0; r < runs; r++) {
    const order: KafkaClientName[] = r % 2 === 0 ? ['kafkajs', 'platformatic'] : ['platformatic', 'kafkajs'];
    progress.step(`9. Kafka client: producers, run ${r + 1}/${runs} (${count} messages)`);
    // A topic per client and run: each consumer then reads exactly what its producer wrote.
    const topics = {} as Record<KafkaClientName, string>;
    for (const client of order) {
      const topic = await brokers.topic(benchName(`bench_client_${client}`));
      topics[client] = topic;
      const messages = benchWireMessages('client', topic, count, keys, padding(payloadBytes));
      const producer = await batchProducer(client);
      try {
        await producer.send(messages.slice(0, 1)); // connected, metadata known; not timed
        const started = now();
        for (let i = 1; i < messages.length; i += batchSize) {
          await producer.send(messages.slice(i, i + batchSize));
          progress.update(Math.min(count, i + batchSize), count, client);
        }
        produced[client].push(((count - 1) * 1000) / (now() - started));
      } finally {
        await producer.close();
      }
    }
    progress.step(`9. Kafka client: consumers, run ${r + 1}/${runs} (${count} messages)`);
    for (const client of order) {
      const ms = await readAll(client)(topics[client], benchName(`bench_client_${client}`), count);
      consumed[client].push(((count - 1) * 1000) / ms);
    }
  }
  const figure = (what: 'producer' | 'consumer', values: Record<KafkaClientName, number[]>, how: string) => {
    const ours = summarize(values.platformatic);
    const baseline = summarize(values.kafkajs);
    context.results.figures.push({
      scenario: '9. Kafka client',
      name: `raw ${what}, ${NAMES.platformatic} beside ${NAMES.kafkajs}: ${how}`,
      unit: 'msg/s',
      ours,
      baseline: { name: `${NAMES.kafkajs}, the same`, value: baseline },
      ratio: ratio(ours.median, baseline.median),
    });
  };
  figure(
    'producer',
    produced,
    `${count} messages of ${payloadBytes} B, ${keys} keys, batches of ${batchSize} each confirmed before the next, idempotent, acks=all`,
  );
  figure(
    'consumer',
    consumed,
    `${count} messages read from the start of a 3-partition topic by a new group, offsets committed every second`,
  );
}
