import * as path from 'node:path';
import { hostNode } from '../../../tools/infra/tool-cache';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { FixtureProcess } from '../support/child-process';
import { TopicReader } from '../support/topic-reader';

const SCRIPT = path.resolve(__dirname, '../support/kafka-publish-process.ts');
const TOPICS = 3;
const ROUNDS = 5;

/**
 * Guide 03: @platformatic/kafka 1.35 "runs on Node 20 all the same" although two of its dependencies declare
 * Node 22.19+. The suites run on Node 24 (tools/test/run-jest.ts); this one starts the library's Kafka
 * transport with `producerClient: 'platformatic'` on the machine's own Node (20.20 here, the Node the services
 * run on) and reads what it published with an independent kafkajs consumer.
 */
describe('@platformatic/kafka on Node 20', () => {
  const topics = new KafkaTopics();
  const readers: TopicReader[] = [];

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.stop()));
    await topics.cleanup();
  });

  // claim: C-13
  it('publishes through @platformatic/kafka on Node 20: every message confirmed, on the topic once, in order', async () => {
    const names = Array.from({ length: TOPICS }, () => uniqueName('platformatic_node20'));
    names.forEach((name) => topics.track(name));
    const publisher = await new FixtureProcess(
      SCRIPT,
      { TOPICS: names.join(','), PRODUCER_CLIENT: 'platformatic', ROUNDS: String(ROUNDS) },
      hostNode(),
    ).start(90_000);
    // The fixture exits with 1 unless every send was CONFIRMED; READY names the client and the Node it ran on.
    expect(publisher.log).toMatch(/READY platformatic on Node 20\.\d+\.\d+/);

    for (const [i, topic] of names.entries()) {
      const reader = await new TopicReader(topic).start();
      readers.push(reader);
      await reader.waitFor(ROUNDS, 60_000);
      const records = await reader.settle();
      expect(records.map((r) => r.key)).toEqual(Array.from({ length: ROUNDS }, () => `c${i}`));
      expect(records.map((r) => (JSON.parse(r.value) as { seq: number }).seq)).toEqual(
        Array.from({ length: ROUNDS }, (_, seq) => seq),
      );
    }
  });
});
