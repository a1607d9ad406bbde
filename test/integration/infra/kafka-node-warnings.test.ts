import * as path from 'node:path';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { FixtureProcess } from '../support/child-process';

const SCRIPT = path.resolve(__dirname, '../support/kafka-publish-process.ts');
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/**
 * Issue 37 item 6: kafkajs 2.2 sets a timer of a negative delay in its request queue, which Node 24 reports on
 * stderr as a TimeoutNegativeWarning at every start of an application that publishes. The library patches
 * it (transports/kafka/kafkajs-request-queue.patch.ts). The suites run on Node 24 (tools/test/run-jest.ts);
 * the process spawned runs on the same Node.
 */
describe('The Kafka transport on Node 24', () => {
  const topics = new KafkaTopics();

  afterAll(async () => {
    await topics.cleanup();
  });

  (NODE_MAJOR >= 24 ? it : it.skip)('publishes without a TimeoutNegativeWarning on stderr', async () => {
    const names = [1, 2, 3].map(() => uniqueName('node_warn'));
    names.forEach((name) => topics.track(name));
    const publisher = await new FixtureProcess(SCRIPT, { TOPICS: names.join(',') }).start(60_000);
    await new Promise((resolve) => setTimeout(resolve, 200)); // whatever it printed on its way out
    expect(publisher.log).toContain('READY');
    expect(publisher.log).not.toMatch(/TimeoutNegativeWarning|negative number/);
  });
});
